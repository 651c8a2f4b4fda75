// Directive names and the errors of k8s.io/apimachinery/pkg/util/mergepatch,
// with the status kube-apiserver answers for each.
import { StatusError, badRequest } from '../../shared/api/status';
import { goFormat } from './json-util';

export const DIRECTIVE = '$patch';
export const RETAIN_KEYS = '$retainKeys';
export const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList';
export const SET_ELEMENT_ORDER = '$setElementOrder';

export const smpErrors = {
  badPatchFormatForPrimitiveList: () => badRequest('invalid patch format of primitive list'),
  badPatchFormatForRetainKeys: () => badRequest('invalid patch format of retainKeys'),
  badPatchFormatForSetElementOrderList: () => badRequest('invalid patch format of setElementOrder list'),
  /** ErrNoListOfLists goes out through NewGenericServerResponse(422), which drops the text. */
  noListOfLists: () =>
    new StatusError(422, 'Invalid', 'the server rejected our request due to an error in our request', {}),
  /** Errors kube-apiserver passes on unconverted: 500, no reason, the message as is. */
  other: (message: string) => new StatusError(500, '', message),
  badPatchType: (t: unknown, m: unknown) =>
    new StatusError(500, '', `unknown patch type: ${String(t)} in map: ${goFormat(m)}`),
  noMergeKey: (m: unknown, key: string) =>
    new StatusError(500, '', `map: ${goFormat(m)} does not contain declared merge key: ${key}`),
};
