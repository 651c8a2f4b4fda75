// The life of an executable, the same for every cmd/ entry point: read and
// check its flags (a bad one prints "Error: ..." and exits 1), start it (and
// give memory back whenever it is idle after a burst: heap/idle-gc.ts), and
// on SIGTERM or SIGINT stop it and exit 0 — a second signal exits at once.
// Nothing but commander and the flag table is loaded before the flags are
// read, so `--help` answers at once (envtest runs `kube-apiserver --help` on
// every start): the logger and the idle GC are required after parsing, and an
// executable may load its own code inside start.
import { Command } from 'commander';
import { addFlags, readFlags, type FlagSpec, type FlagValues } from './flags';
import type { Logger } from '../log';

export interface Stoppable {
  stop(): Promise<void>;
}

/** What a running executable may ask of the process. */
export interface ProcessControl {
  /** A signal asked it to stop. */
  stopping(): boolean;
  /** Flushes the logs and exits. */
  exit(code: number): void;
}

export interface Executable<C = FlagValues> {
  name: string;
  description: string;
  flags: FlagSpec[];
  /** Its logger, or the logger's name (then made only once the flags are read). */
  log: Logger | string;
  /** Rewrites the arguments before commander reads them. */
  argv?(argv: string[]): string[];
  /** What start takes, from the flag values (default: the values); a throw is a usage error. */
  configure?(values: FlagValues, cmd: Command): C;
  start(config: C, control: ProcessControl): Promise<Stoppable>;
  /** Logged when a signal stops it. */
  stopMessage?: string;
}

// Exiting writes the buffered log lines (shared/log flushes on 'exit').
const exit = (code: number): void => process.exit(code);

function fail(err: unknown): never {
  console.error(`Error: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}

async function run<C = FlagValues>(e: Executable<C>): Promise<void> {
  const cmd = addFlags(
    new Command(e.name)
      .description(e.description)
      .helpOption('-h, --help', `help for ${e.name}`)
      .allowExcessArguments(false),
    e.flags,
  );
  cmd.parse(e.argv ? e.argv(process.argv) : process.argv);
  const logging = await import('../log/index.js');
  const log = typeof e.log === 'string' ? logging.logger(e.log) : e.log;
  let config: C;
  try {
    const { values, warnings } = readFlags(cmd, e.flags);
    for (const w of warnings) log.warn(w);
    logging.setVerbosity(values.v ?? 0);
    config = e.configure ? e.configure(values, cmd) : (values as C);
  } catch (err) {
    fail(err);
  }
  let stopping = false;
  const running = await e.start(config, { stopping: () => stopping, exit });
  (await import('../heap/idle-gc.js')).startIdleGc();
  const stop = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info(e.stopMessage ?? 'received signal, shutting down', { signal });
    running
      .stop()
      .catch((err) => log.error('shutdown failed', { err: String(err) }))
      .finally(() => exit(0));
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/** Runs the executable until a signal stops it. */
export function runExecutable<C = FlagValues>(e: Executable<C>): void {
  run(e).catch(fail);
}
