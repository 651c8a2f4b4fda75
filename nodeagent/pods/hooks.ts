// Container lifecycle hooks as the kubelet's handler runner runs them:
// postStart right after the container started, preStop before it is asked to
// stop (within its grace period) — exec through the runtime's ExecSync,
// httpGet to the pod's address, or sleep. A failing hook gives the kubelet's
// message (FailedPostStartHook / FailedPreStopHook events).
import { hookGet, type ProbeTarget } from './probe-handlers';
import type { ContainerRuntime } from './runtime';
import { podFullName } from './status';

/** Go's %v of a []string. */
const goList = (xs: string[]) => `[${xs.join(' ')}]`;
/** Go's %q. */
const q = (s: string) => JSON.stringify(s);

/** Runs one handler; resolves to the failure message, or undefined when it succeeded. */
export async function runLifecycleHandler(
  handler: any,
  pod: any,
  container: any,
  containerID: string,
  podIP: string,
  runtime: Pick<ContainerRuntime, 'execSync'>,
  timeoutSeconds: number,
  sleep: (ms: number) => Promise<void>,
): Promise<string | undefined> {
  const target: ProbeTarget = { container, containerID, podIP, runtime };
  const where = `for Container ${q(container.name)} in Pod ${q(podFullName(pod))}`;
  if (handler.exec) {
    const cmd: string[] = handler.exec.command ?? [];
    let err: string | undefined;
    let output = '';
    if (!runtime.execSync) err = 'the runtime cannot exec';
    else {
      try {
        const r = await runtime.execSync(containerID, cmd, timeoutSeconds);
        output = Buffer.concat([r.stdout, r.stderr]).toString('utf8');
        if (r.exitCode !== 0) err = `command '${cmd.join(' ')}' exited with ${r.exitCode}: ${output}`;
      } catch (e) {
        err = e instanceof Error ? e.message : String(e);
      }
    }
    return err === undefined
      ? undefined
      : `Exec lifecycle hook (${goList(cmd)}) ${where} failed - error: ${err}, message: ${q(output)}`;
  }
  if (handler.httpGet) {
    const err = await hookGet(handler.httpGet, target, timeoutSeconds);
    return err === undefined
      ? undefined
      : `HTTP lifecycle hook (${handler.httpGet.path ?? ''}) ${where} failed - error: ${err}`;
  }
  if (handler.sleep) {
    await sleep(Math.min(Number(handler.sleep.seconds) || 0, timeoutSeconds) * 1000);
    return undefined;
  }
  return undefined;
}
