// The container runtime interface the pod workers drive (the part of the CRI
// the agent needs): images, and containers that are created, started,
// stopped within a grace period, and that may exit on their own.

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

export interface RuntimeImage {
  /** Digest reference first, then the tagged name. */
  names: string[];
  sizeBytes: number;
}

export interface ContainerRuntime {
  /** "fake": the scheme of container IDs and of containerRuntimeVersion. */
  readonly type: string;
  readonly version: string;
  hasImage(image: string): boolean;
  pullImage(image: string): Promise<PullResult>;
  images(): RuntimeImage[];
  /** Creates a container of pod (its spec `container`) writing its log to logPath. */
  createContainer(
    pod: any,
    container: any,
    kind: ContainerKind,
    attempt: number,
    logPath: string,
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
  /** The containers of a pod, oldest first. */
  containers(podUID: string): ContainerRecord[];
  /** Called whenever a container exits (on its own or stopped). */
  onExit(listener: (c: ContainerRecord) => void): void;
  /** Stops timers; containers are left as they are (a real runtime keeps them running). */
  close(): Promise<void>;
}
