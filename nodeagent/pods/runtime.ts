// The container runtime interface the pod workers drive (the part of the CRI
// the agent needs): images, and containers that are created, started,
// stopped within a grace period, and that may exit on their own.
import type { ResolverConfig } from './dns';

export type ContainerKind = 'init' | 'regular';

export type ContainerState = 'created' | 'running' | 'exited';

/** One container instance (one attempt of a pod's container). */
export interface ContainerRecord {
  /** "<runtime>://<64 hex>". */
  id: string;
  podUID: string;
  name: string;
  kind: ContainerKind;
  image: string;
  /** The pulled image's digest reference. */
  imageID: string;
  /** Restart count at creation (0 for the first attempt). */
  attempt: number;
  state: ContainerState;
  createdAt: number;
  startedAt?: number;
  finishedAt?: number;
  exitCode?: number;
  /** Completed, Error, OOMKilled ... */
  reason?: string;
  message?: string;
  /** The container's log file (CRI format). */
  logPath: string;
}

export interface PullResult {
  imageRef: string;
  alreadyPresent: boolean;
  sizeBytes: number;
  durationMs: number;
}

/** Registry credentials for a pull (from the pod's imagePullSecrets), as the CRI's AuthConfig. */
export interface RegistryAuth {
  serverAddress: string;
  username?: string;
  password?: string;
  auth?: string;
  identityToken?: string;
  registryToken?: string;
}

export interface RuntimeImage {
  /** Digest reference first, then the tagged name. */
  names: string[];
  sizeBytes: number;
}

/** What the agent resolved for one container before creating it (env sources looked up, volumes set up). */
export interface ContainerConfig {
  /** The container's environment, in order, every value source already resolved. */
  env: { name: string; value: string }[];
  /** Bind mounts: a directory or file on the node at a path in the container. */
  mounts: { containerPath: string; hostPath: string; readOnly: boolean }[];
}

/** The addresses of a pod's sandbox. */
export interface SandboxResult {
  /** Pod IPs the runtime's network gave the sandbox; empty when the agent assigns them (fake). */
  podIPs: string[];
}

/** A streaming session the runtime serves at a URL (CRI Exec, Attach, PortForward). */
export type StreamRequest =
  | {
      kind: 'exec';
      containerID: string;
      cmd: string[];
      tty: boolean;
      stdin: boolean;
      stdout: boolean;
      stderr: boolean;
    }
  | { kind: 'attach'; containerID: string; tty: boolean; stdin: boolean; stdout: boolean; stderr: boolean }
  | { kind: 'portforward'; podUID: string; ports: number[] };

/** A container's resource use as the runtime last measured it (CRI ContainerStats). */
export interface ContainerUsage {
  /** When it was measured (ms). */
  time: number;
  cpuCoreNanoSeconds: number;
  cpuNanoCores: number;
  memoryWorkingSetBytes: number;
  memoryUsageBytes: number;
  memoryRSSBytes: number;
  rootfsUsedBytes: number;
}

export interface ExecSyncResult {
  exitCode: number;
  stdout: Buffer;
  stderr: Buffer;
}

export interface ContainerRuntime {
  /** "fake": the scheme of container IDs and of containerRuntimeVersion. */
  readonly type: string;
  readonly version: string;
  hasImage(image: string): boolean;
  /**
   * Reads the runtime's image list again, for an image put there behind the agent's back
   * (`tkube image load`, `ctr images import`). Absent: the runtime's list is always current.
   */
  refreshImages?(): Promise<void>;
  /** Pulls an image, trying each of the credentials that match its registry (none: anonymous). */
  pullImage(image: string, auths?: RegistryAuth[]): Promise<PullResult>;
  images(): RuntimeImage[];
  /**
   * Makes sure the pod's sandbox (network namespace, address) exists; called before its first
   * container and on every sync. dns forms the pod's resolv.conf (dns.ts), asked only when a
   * sandbox is made; absent, the runtime's default (the host's). Absent: the runtime has no
   * sandboxes (fake).
   */
  ensureSandbox?(pod: any, dns?: () => ResolverConfig): Promise<SandboxResult>;
  /** Stops the pod's sandbox (its network is given back); its exited containers stay. */
  stopSandbox?(podUID: string): Promise<void>;
  /** Stops and removes the pod's sandbox and whatever is left in it. */
  removeSandbox?(podUID: string): Promise<void>;
  /** The uids of every pod the runtime has a sandbox or container of (to clean up those no source wants). */
  podUIDs?(): string[];
  /** Creates a container of pod (its spec `container`) writing its log to logPath. */
  createContainer(
    pod: any,
    container: any,
    kind: ContainerKind,
    attempt: number,
    logPath: string,
    config?: ContainerConfig,
  ): Promise<ContainerRecord>;
  startContainer(id: string): Promise<void>;
  /** Asks the container to stop (SIGTERM), killing it after gracePeriodSeconds; resolves once it exited. */
  stopContainer(id: string, gracePeriodSeconds: number): Promise<void>;
  removeContainer(id: string): Promise<void>;
  /**
   * Takes over a container the API reports running (after the agent restarted),
   * when the runtime can; undefined when it cannot.
   */
  adoptContainer?(
    pod: any,
    container: any,
    kind: ContainerKind,
    status: any,
    logPath: string,
  ): ContainerRecord | undefined;
  container(id: string): ContainerRecord | undefined;
  /** Runs a command in a container and waits for it (CRI ExecSync): exec probes, /run. Absent: nothing runs (fake). */
  execSync?(containerID: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResult>;
  /** The runtime streaming server's URL for one exec/attach/port-forward session. Absent: nothing runs (fake). */
  streamURL?(req: StreamRequest): Promise<string>;
  /** The containers of a pod, oldest first. */
  containers(podUID: string): ContainerRecord[];
  /** The container's last measured resource use; absent: the runtime measures nothing (fake). */
  containerUsage?(id: string): ContainerUsage | undefined;
  /** "" when the runtime and its network are ready, else why not (for the Node's Ready condition). */
  notReadyReason?(): string;
  /** Called whenever a container exits (on its own or stopped). */
  onExit(listener: (c: ContainerRecord) => void): void;
  /** Stops timers; containers are left as they are (a real runtime keeps them running). */
  close(): Promise<void>;
}
