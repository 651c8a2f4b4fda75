// The scenarios of `npm run bench`, run against real apiserver processes of one
// backend. Instance A (configmaps) serves start/idle, create, get and watch;
// instance B (pods) serves memory, list and restart-with-data, so the objects
// of one scenario never weigh on another's figures.
export { type Ctx, loadRow, type Options, type Scenario, SCENARIOS } from './context';
export { Instance } from './instance';
export { coldStarts } from './start';
export { createScenario } from './create';
export { getScenario } from './get';
export { loneScenario } from './lone';
export { watchScenario } from './watch';
export { listScenario } from './list';
export { podsInstance } from './pods-instance';
export { configMapsInstance } from './configmaps-instance';
