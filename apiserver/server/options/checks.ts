// Value checks shared by the flag tables.

export const port = (v: number) =>
  v < 1 || v > 65535 ? 'must be a port number between 1 and 65535' : undefined;
export const nonNegative = (v: number) => (v < 0 ? 'must not be negative' : undefined);
