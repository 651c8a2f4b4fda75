// The node's images through the CRI ImageService: what is present (a cache of
// ListImages, so the pod workers can ask synchronously), pulls with the pod's
// registry credentials, the list the Node status shows, and image garbage
// collection between --image-gc-high-threshold and --image-gc-low-threshold
// (least recently used first, never an image a container uses, nor the
// sandbox image), as kubelet's image manager does.
import { statfsSync } from 'node:fs';
import type { Clock } from '../../shared/client/clock';
import { logger } from '../../shared/log';
import { fullImageName } from '../pods/image-names';
import type { PullResult, RegistryAuth, RuntimeImage } from '../pods/runtime';
import type { CriClient } from '../../shared/cri/client';

const log = logger('nodeagent/cri');

interface CriImage {
  id: string;
  repoTags: string[];
  repoDigests: string[];
  size: string;
  pinned?: boolean;
}

export interface ImageGCPolicy {
  /** Percent of the image filesystem's capacity above which GC runs. */
  highThresholdPercent: number;
  /** Percent GC frees down to. */
  lowThresholdPercent: number;
  /** An unused image younger than this is kept (--minimum-image-ttl-duration). */
  minAgeMs: number;
}

/** The registry host of an image reference (docker.io for short names). */
export function registryOf(image: string): string {
  return fullImageName(image).split('/')[0];
}

/** The registry a credential is for: its server without scheme or path, Docker Hub's names as docker.io. */
export function credentialRegistry(server: string): string {
  const host = server.replace(/^[a-z]+:\/\//, '').split('/')[0];
  return host === 'index.docker.io' || host === 'registry-1.docker.io' ? 'docker.io' : host;
}

export class CriImages {
  private images: CriImage[] = [];
  /** Every name an image answers to (tags, digests, id) → the image. */
  private readonly byName = new Map<string, CriImage>();
  private readonly lastUsed = new Map<string, number>();
  private readonly firstSeen = new Map<string, number>();

  constructor(
    private readonly client: CriClient,
    private readonly clock: Clock,
    private readonly o: { sandboxImage: string; gc: ImageGCPolicy; registryMirror?: string },
  ) {}

  async refresh(): Promise<void> {
    const res = await this.client.call('ListImages', {});
    this.images = res.images;
    this.byName.clear();
    const now = this.clock.now();
    for (const img of this.images) {
      for (const n of [...img.repoTags, ...img.repoDigests, img.id]) this.byName.set(n, img);
      if (!this.lastUsed.has(img.id)) this.lastUsed.set(img.id, now);
      if (!this.firstSeen.has(img.id)) this.firstSeen.set(img.id, now);
    }
  }

  private lookup(image: string): CriImage | undefined {
    return this.byName.get(image) ?? this.byName.get(fullImageName(image));
  }

  has(image: string): boolean {
    return !!this.lookup(image);
  }

  /** The image's id (sha256:...) when present. */
  idOf(image: string): string | undefined {
    return this.lookup(image)?.id;
  }

  markUsed(image: string): void {
    const img = this.lookup(image);
    if (img) this.lastUsed.set(img.id, this.clock.now());
  }

  /** Pulls, trying each credential for the image's registry in turn (kubelet's order), then anonymously. */
  async pull(image: string, auths: RegistryAuth[] = [], sandboxConfig?: any): Promise<PullResult> {
    const started = this.clock.now();
    const had = this.has(image);
    const host = registryOf(image);
    const matching = auths.filter(
      (a) => registryOf(`${a.serverAddress.replace(/^https?:\/\//, '')}/x`) === host,
    );
    const attempts: (RegistryAuth | undefined)[] = matching.length ? matching : [undefined];
    let lastErr: unknown;
    for (const auth of attempts) {
      try {
        // Pulls take as long as they take (kubelet gives them no deadline of their own).
        const res = await this.client.call(
          'PullImage',
          { image: { image }, ...(auth ? { auth } : {}), ...(sandboxConfig ? { sandboxConfig } : {}) },
          0,
        );
        await this.refresh();
        const img = this.lookup(image) ?? this.byName.get(res.imageRef);
        this.markUsed(image);
        return {
          imageRef: img?.id ?? res.imageRef,
          alreadyPresent: had,
          sizeBytes: Number(img?.size ?? 0),
          durationMs: this.clock.now() - started,
        };
      } catch (err) {
        lastErr = err;
      }
    }
    // containerd's "not found" names the image, not where it looked.
    if (this.o.registryMirror && lastErr instanceof Error)
      lastErr.message += ` (pulled through the registry mirror ${this.o.registryMirror})`;
    throw lastErr;
  }

  /** The Node status' images: digests first, then tags, largest first (kubelet caps the list at 50). */
  list(): RuntimeImage[] {
    return this.images
      .map((img) => ({ names: [...img.repoDigests, ...img.repoTags], sizeBytes: Number(img.size) }))
      .filter((i) => i.names.length)
      .sort((a, b) => b.sizeBytes - a.sizeBytes);
  }

  /**
   * kubelet's image GC: when the image filesystem is above the high threshold, remove images no
   * container uses, least recently used first, until it is below the low threshold.
   */
  async collectGarbage(inUse: Set<string>): Promise<number> {
    const fs = await this.client.call('ImageFsInfo', {});
    const usage = fs.imageFilesystems?.[0];
    const mount: string | undefined = usage?.fsId?.mountpoint;
    if (!mount) return 0;
    const st = statfsSync(mount);
    const capacity = st.blocks * st.bsize;
    const available = st.bavail * st.bsize;
    const usedPercent = ((capacity - available) * 100) / capacity;
    if (usedPercent < this.o.gc.highThresholdPercent) return 0;
    let toFree = capacity - available - (capacity * this.o.gc.lowThresholdPercent) / 100;
    const sandboxID = this.idOf(this.o.sandboxImage);
    const now = this.clock.now();
    const candidates = this.images
      .filter((i) => !inUse.has(i.id) && i.id !== sandboxID && !i.pinned)
      .filter((i) => now - (this.firstSeen.get(i.id) ?? now) >= this.o.gc.minAgeMs)
      .sort((a, b) => (this.lastUsed.get(a.id) ?? 0) - (this.lastUsed.get(b.id) ?? 0));
    let freed = 0;
    for (const img of candidates) {
      if (toFree <= 0) break;
      try {
        await this.client.call('RemoveImage', { image: { image: img.id } });
        freed += Number(img.size);
        toFree -= Number(img.size);
        log.info('image garbage collected', { image: img.repoTags[0] ?? img.id, size: img.size });
      } catch (err) {
        log.warn('image garbage collection failed', { image: img.id, err: String(err) });
      }
    }
    await this.refresh();
    return freed;
  }
}
