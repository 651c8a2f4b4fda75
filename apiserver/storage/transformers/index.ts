// Encryption at rest (--encryption-provider-config): a value transformer
// between the object codec and the store.

/** Transforms stored values (encrypts on the way in, decrypts on the way out). */
export interface ValueTransformer {
  toStorage(data: Buffer, key: string): Buffer;
  fromStorage(data: Buffer, key: string): Buffer;
}

export async function buildTransformer(_configFile: string | undefined): Promise<ValueTransformer | null> {
  return null;
}
