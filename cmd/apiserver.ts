// tkube apiserver: the Kubernetes resource API over HTTPS.
import { Command } from 'commander';
import { addFlags, readFlags } from '../shared/options/flags';
import { apiserverFlags } from '../apiserver/server/options';
import { startAPIServer } from '../apiserver/server/app';
import { flushLogs, logger, setVerbosity } from '../shared/log';

const log = logger('apiserver');

async function main(): Promise<void> {
  const cmd = addFlags(
    new Command('apiserver')
      .description(
        'The tkube API server validates and configures data for the API objects (pods, services, deployments ...) and serves the Kubernetes REST API over HTTPS.',
      )
      .helpOption('-h, --help', 'help for apiserver')
      .allowExcessArguments(false),
    apiserverFlags,
  );
  cmd.parse(process.argv);
  let values;
  try {
    const parsed = readFlags(cmd, apiserverFlags);
    values = parsed.values;
    for (const w of parsed.warnings) log.warn(w);
  } catch (err) {
    console.error(`Error: ${(err as Error).message}`);
    process.exit(1);
  }
  setVerbosity(values.v ?? 0);
  const running = await startAPIServer(values);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      process.exit(1);
    }
    stopping = true;
    log.info('received signal, shutting down', { signal });
    running
      .stop()
      .catch((err) => log.error('shutdown failed', { err: String(err) }))
      .finally(() => {
        flushLogs();
        process.exit(0);
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err) => {
  console.error(`Error: ${err instanceof Error ? err.message : String(err)}`);
  flushLogs();
  process.exit(1);
});
