// A forked load worker of `npm run bench`: runs the tasks the driver sends over
// IPC (closed-loop load, watch groups) and answers with their samples. It holds
// no state between runs except one watch group. It exits when the driver goes away.
import { type LoadTask, runLoad } from './lib/load';
import { type WatchCollectTask, WatchGroup, type WatchOpenTask, type WatchSettleTask } from './lib/watch';

export type Task = LoadTask | WatchOpenTask | WatchSettleTask | WatchCollectTask;

interface Message {
  id: number;
  task: Task;
}

let group: WatchGroup | undefined;

async function perform(task: Task): Promise<unknown> {
  switch (task.kind) {
    case 'load':
      return runLoad(task);
    case 'watch-open':
      group = new WatchGroup();
      return group.open(task);
    case 'watch-settle':
      if (!group) throw new Error('no watch group open');
      return group.settle(task);
    case 'watch-collect': {
      if (!group) throw new Error('no watch group open');
      const g = group;
      group = undefined;
      return g.collect(task);
    }
  }
}

process.on('message', (m: Message) => {
  perform(m.task).then(
    (result) => process.send!({ id: m.id, result }),
    (err: unknown) => process.send!({ id: m.id, error: String((err as Error)?.stack ?? err) }),
  );
});
process.on('disconnect', () => process.exit(0));
