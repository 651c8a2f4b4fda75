// NamespaceLifecycle: no new objects in a namespace that does not exist or is
// terminating, and the system namespaces cannot be deleted.
import { notFound, StatusError, forbidden } from '../../../shared/api/status';
import type { Registry } from '../../registry/registry';
import { systemContext } from '../../registry/context';
import type { AdmissionAttributes, AdmissionPlugin } from './types';

const IMMORTAL = new Set(['default', 'kube-system', 'kube-public']);

export class NamespaceLifecycle implements AdmissionPlugin {
  readonly name = 'NamespaceLifecycle';

  constructor(private readonly registry: () => Registry) {}

  async validate(a: AdmissionAttributes): Promise<void> {
    if (a.group === '' && a.resource === 'namespaces') {
      if (a.operation === 'DELETE' && IMMORTAL.has(a.name)) {
        throw forbidden({ group: '', resource: 'namespaces' }, a.name, 'this namespace may not be deleted');
      }
      return;
    }
    if (a.operation !== 'CREATE' || !a.namespace) return;
    // Subresource creates (bindings, evictions, tokens) act on existing objects.
    if (a.subresource) return;
    const ns = this.registry().preferred('', 'namespaces');
    if (!ns) return;
    let found;
    try {
      found = (await ns.store.reader.get(systemContext(), a.namespace, '0')).obj;
    } catch {
      // The cache may lag a namespace created a moment ago: ask the store.
      try {
        found = (await ns.store.reader.get(systemContext(), a.namespace)).obj;
      } catch {
        throw notFound({ group: '', resource: 'namespaces' }, a.namespace);
      }
    }
    if (found.status?.phase === 'Terminating' || found.metadata?.deletionTimestamp) {
      const err = new StatusError(
        403,
        'Forbidden',
        `${a.resource}${a.group ? '.' + a.group : ''} "${a.name}" is forbidden: unable to create new content in namespace ${a.namespace} because it is being terminated`,
        {
          name: a.name,
          group: a.group,
          kind: a.resource,
          causes: [
            {
              reason: 'NamespaceTerminating',
              message: `namespace ${a.namespace} is being terminated`,
              field: 'metadata.namespace',
            },
          ],
        },
      );
      throw err;
    }
  }
}
