// Helper process for durability.test.ts: writes keys from concurrent writers
// and prints each acknowledgement ("<key> <revision>") as soon as it arrives.
// The test kills it with SIGKILL mid-stream. Usage: node durability-child.js <dataDir> <round> <count>
import { openEmbeddedStorage } from './index';

async function main(): Promise<void> {
  const [dataDir, round, count] = process.argv.slice(2);
  const total = Number(count);
  const s = await openEmbeddedStorage({ dataDir, compactionIntervalMs: 0 });
  let next = 0;
  const writer = async () => {
    while (next < total) {
      const key = `/durable/${round}/${next++}`;
      const kv = await s.create(key, Buffer.from(`value of ${key}`));
      // Pipes are synchronous on Linux: once write returns, the parent can read the line.
      process.stdout.write(`${key} ${kv.modRevision}\n`);
    }
  };
  await Promise.all(Array.from({ length: 32 }, writer));
  await s.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`${String(err)}\n`);
  process.exit(1);
});
