// cache.FilteringResourceEventHandler: a handler that sees only objects
// passing a filter; an update across the filter's edge becomes an add or a delete.
import type { ResourceEventHandler } from './processor';
import type { DeletedFinalStateUnknown } from './store';

export function filteringHandler<T>(
  filter: (obj: T | DeletedFinalStateUnknown<T>) => boolean,
  handler: ResourceEventHandler<T>,
): ResourceEventHandler<T> {
  return {
    onAdd(obj, initial) {
      if (filter(obj)) handler.onAdd?.(obj, initial);
    },
    onUpdate(oldObj, newObj) {
      const older = filter(oldObj);
      const newer = filter(newObj);
      if (newer && older) handler.onUpdate?.(oldObj, newObj);
      else if (newer) handler.onAdd?.(newObj, false);
      else if (older) handler.onDelete?.(oldObj);
    },
    onDelete(obj) {
      if (filter(obj)) handler.onDelete?.(obj);
    },
  };
}
