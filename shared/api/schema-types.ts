// The shapes of the API facts as this project stores them (shared/api/facts/).
// One schema source: validation, defaulting, OpenAPI, patch and apply merge
// rules, Table columns and the Protobuf codec are all derived from these.

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface ProtoField {
  /** Field number. */
  n: number;
  /** Proto type: a scalar name (string, int64, bool, bytes, ...) or a message name. For maps, the value type. */
  t: string;
  repeated?: true;
  map?: true;
  /** Map key type. */
  key?: string;
  /** The proto field name when it differs from the JSON name. */
  name?: string;
  /** Proto messages the JSON flattens away, outermost first (e.g. Volume → volumeSource). */
  via?: { message: string; name: string; n: number }[];
}

export interface FieldSchema {
  type?: 'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array';
  format?: string;
  /** Name of a TypeSchema. */
  ref?: string;
  items?: FieldSchema;
  /** Value schema of a map (additionalProperties). */
  values?: FieldSchema;
  enum?: string[];
  patchStrategy?: string;
  patchMergeKey?: string;
  listType?: 'atomic' | 'set' | 'map';
  listMapKeys?: string[];
  mapType?: 'atomic' | 'granular';
  intOrString?: true;
  unionDiscriminator?: true;
  /** apiVersion/kind of a top-level kind: carried by the Protobuf envelope only. */
  envelope?: true;
  proto?: ProtoField;
}

export interface TypeSchema {
  type?: string;
  format?: string;
  gvk?: GroupVersionKind[];
  required?: string[];
  /** x-kubernetes-map-type of the struct itself. */
  structType?: 'atomic' | 'granular';
  unions?: { discriminator?: string; fieldsToDiscriminateBy: Record<string, string> }[];
  protoMessage?: string;
  properties?: Record<string, FieldSchema>;
}

export interface ProtoMessage {
  fields: { name: string; n: number; type: string; repeated?: true; key?: string; value?: string }[];
  /** Timestamp for Time/MicroTime. */
  as?: string;
  /** Quantity: the message is carried as its string. */
  embed?: string;
  /** Slice wrappers (Verbs, ExtraValue). */
  nullable?: true;
}

export interface SubresourceFacts {
  name: string;
  kind: string;
  verbs: string[];
  /** Group and version of the subresource's kind when they differ from the resource's. */
  group?: string;
  version?: string;
  /** A connect subresource (proxy, exec, attach, portforward). */
  connect?: true;
}

export interface ResourceFacts {
  group: string;
  version: string;
  resource: string;
  kind: string;
  singular: string;
  namespaced: boolean;
  verbs: string[];
  definition: string;
  /** The kind has a spec, and its status an observedGeneration (decides generation tracking). */
  hasSpec?: true;
  statusObservedGeneration?: true;
  shortNames?: string[];
  categories?: string[];
  deprecated?: true;
  subresources?: SubresourceFacts[];
}

/**
 * One Go struct field as encoding/json sees it (from go-fields.json). f holds
 * flags: 1 omitempty, 2 omitzero, 4 pointer, 8 slice, 16 map, 32 inline (an
 * embedded struct whose fields are flattened in place). r: the struct definition
 * of the field (or of its elements). z: what Go writes for a zero non-struct value
 * (absent for structs, which are written field by field, and for pointers, slices
 * and maps, whose zero is null).
 */
export interface GoField {
  j: string;
  f?: number;
  r?: string;
  z?: unknown;
}

export interface GoStruct {
  /** A type with its own MarshalJSON (Time, Quantity, IntOrString...): its value is written as given. */
  custom?: boolean;
  fields: GoField[];
}

export interface GoFields {
  defs: Record<string, GoStruct>;
}
