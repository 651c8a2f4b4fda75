// A watch as an async iterable of {type, object}: JSON lines
// (application/json) or length-prefixed Protobuf frames
// (application/vnd.kubernetes.protobuf;stream=watch), each decoded once.
import { PROTOBUF_MEDIA_TYPE, WatchFrameDecoder } from '../codec/protobuf';
import { goShapeObject } from '../codec/go-json';
import { parseJSONInt64 } from '../codec/json-int64';
import type { StreamResponse } from './rest';
import { isAbortError, isProbableEOF } from './errors';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent<T = any> {
  type: WatchEventType;
  /** The object; a Status for ERROR; only metadata.resourceVersion (and annotations) for BOOKMARK. */
  object: T;
}

/** Splits a JSON watch stream on newlines; a document spanning chunks is joined once. */
export class JsonLineDecoder {
  private parts: Buffer[] = [];

  push(chunk: Buffer): any[] {
    const out: any[] = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      if (nl < 0) break;
      let line = chunk.subarray(start, nl);
      if (this.parts.length) {
        this.parts.push(line);
        line = Buffer.concat(this.parts);
        this.parts = [];
      }
      start = nl + 1;
      if (!isBlank(line)) out.push(parseJSONInt64(line.toString('utf8')));
    }
    if (start < chunk.length) {
      const tail = chunk.subarray(start);
      // Copy small tails so a big chunk is not kept alive for a few bytes.
      this.parts.push(tail.length < 4096 ? Buffer.from(tail) : tail);
    }
    return out;
  }

  /** At the end of the stream: a document left without its newline is still one. */
  end(): any[] {
    if (!this.parts.length) return [];
    const rest = Buffer.concat(this.parts);
    this.parts = [];
    return isBlank(rest) ? [] : [parseJSONInt64(rest.toString('utf8'))];
  }
}

function isBlank(b: Buffer): boolean {
  for (let i = 0; i < b.length; i++) {
    const c = b[i];
    if (c !== 32 && c !== 9 && c !== 13 && c !== 10) return false;
  }
  return true;
}

interface FrameDecoder {
  push(chunk: Buffer): WatchEvent[];
  end(): WatchEvent[];
}

function decoderFor(contentType: string): FrameDecoder {
  if (contentType.startsWith(PROTOBUF_MEDIA_TYPE)) {
    const d = new WatchFrameDecoder();
    return {
      push: (c) =>
        d.push(c).map((e) => ({ type: e.type as WatchEventType, object: goShapeObject(e.object) as any })),
      end: () => {
        d.end();
        return [];
      },
    };
  }
  const d = new JsonLineDecoder();
  return { push: (c) => d.push(c), end: () => d.end() };
}

/** A running watch. Iterate it once; stop() ends the iteration without an error. */
export class Watch<T = any> implements AsyncIterable<WatchEvent<T>> {
  private stopped = false;
  private iterated = false;

  constructor(private readonly res: StreamResponse) {}

  /** Whether stop() was called. */
  get isStopped(): boolean {
    return this.stopped;
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.res.abort();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent<T>> {
    if (this.iterated) throw new Error('a watch can be iterated only once');
    this.iterated = true;
    const dec = decoderFor(this.res.contentType);
    try {
      for await (const chunk of this.res.body) {
        if (this.stopped) return;
        const events = dec.push(chunk as Buffer);
        for (const ev of events) {
          yield ev as WatchEvent<T>;
          if (this.stopped) return;
        }
      }
      if (this.stopped) return;
      for (const ev of dec.end()) yield ev as WatchEvent<T>;
    } catch (err) {
      if (this.stopped || isAbortError(err)) return;
      throw err;
    } finally {
      this.stop();
    }
  }
}

/** Whether an error thrown by a watch iteration is the connection going away (client-go: a normal close). */
export function isWatchClosedError(err: unknown): boolean {
  return isProbableEOF(err) || isAbortError(err);
}
