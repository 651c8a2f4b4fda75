// The embedded storage backend (the apiserver's default store): LMDB in-process.
export { openEmbeddedStorage, type Clock, type EmbeddedOptions, type EmbeddedStorage } from './store';
