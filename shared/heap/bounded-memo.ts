// A memo of a pure function of a string, kept small by starting over once full: for
// values that objects repeat (quantities, times, image names, field names), where an
// LRU's bookkeeping would cost more than recomputing the rare value that falls out.

export function boundedMemo<V>(max: number, compute: (key: string) => V): (key: string) => V {
  const memo = new Map<string, V>();
  return (key) => {
    let v = memo.get(key);
    if (v === undefined && !memo.has(key)) {
      v = compute(key);
      if (memo.size >= max) memo.clear();
      memo.set(key, v);
    }
    return v as V;
  };
}
