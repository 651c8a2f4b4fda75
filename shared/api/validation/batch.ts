// batch/v1: Job and CronJob (pkg/apis/batch/validation), and the standard
// cron syntax check with robfig/cron's messages.
import type { FieldError } from '../field-errors';
import { invalid, notSupported, required } from '../field-errors';
import {
  selectorMatches,
  validateImmutableField,
  validateLabelSelector,
  validateNonnegative,
} from './metadata';
import { asObj, asStr, asStrMap, child, isSet, type Obj } from './path';
import { validatePodTemplateSpec } from './core';
import { registerKindRules } from './registry';

const spec = (o: Obj) => asObj(o.spec) ?? {};

function validateJobSpec(s: Obj, p: string, requireSelector: boolean): FieldError[] {
  const errs: FieldError[] = [];
  if (requireSelector || isSet(s.selector)) {
    if (!isSet(s.selector)) errs.push(required(child(p, 'selector'), ''));
    else errs.push(...validateLabelSelector(s.selector, child(p, 'selector')));
  }
  const tpl = asObj(s.template) ?? {};
  const labels = asStrMap(asObj(tpl.metadata)?.labels);
  if (isSet(s.selector) && !selectorMatches(s.selector, labels))
    errs.push(
      invalid(child(p, 'template.metadata.labels'), labels, '`selector` does not match template `labels`'),
    );
  for (const f of [
    'parallelism',
    'completions',
    'activeDeadlineSeconds',
    'backoffLimit',
    'ttlSecondsAfterFinished',
  ])
    errs.push(...validateNonnegative(s[f], child(p, f)));
  if (s.completionMode === 'Indexed' && !isSet(s.completions))
    errs.push(required(child(p, 'completions'), 'when completion mode is Indexed'));
  errs.push(...validatePodTemplateSpec(tpl, child(p, 'template')));
  const rp = asStr(asObj(tpl.spec)?.restartPolicy);
  if (rp !== 'OnFailure' && rp !== 'Never')
    errs.push(notSupported(child(p, 'template.spec.restartPolicy'), rp, ['OnFailure', 'Never']));
  return errs;
}

registerKindRules('batch', 'Job', {
  validate: (o) => validateJobSpec(spec(o), 'spec', true),
  validateUpdate(o, old) {
    const s = spec(o);
    const os = spec(old);
    const errs = validateImmutableField(s.selector, os.selector, 'spec.selector');
    if (os.suspend !== true) errs.push(...validateImmutableField(s.template, os.template, 'spec.template'));
    if (s.completionMode !== 'Indexed')
      errs.push(...validateImmutableField(s.completions, os.completions, 'spec.completions'));
    return errs;
  },
});

/**
 * The selector and labels the Job strategy generates on create when
 * manualSelector is not set (registry PrepareForCreate calls this).
 */
export function generateJobSelector(job: Obj, uid: string): void {
  const s = (job.spec ??= {}) as Obj;
  if (s.manualSelector === true) return;
  const name = asStr(asObj(job.metadata)?.name);
  s.selector = { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } };
  const tpl = (s.template ??= {}) as Obj;
  const meta = (tpl.metadata ??= {}) as Obj;
  meta.labels = {
    ...asStrMap(meta.labels),
    'batch.kubernetes.io/controller-uid': uid,
    'batch.kubernetes.io/job-name': name,
    'controller-uid': uid,
    'job-name': name,
  };
}

const CONCURRENCY = ['Allow', 'Forbid', 'Replace'];

function validateCronJob(o: Obj, allowTZ: boolean): FieldError[] {
  const s = spec(o);
  const errs: FieldError[] = [];
  const name = asStr(asObj(o.metadata)?.name);
  // The controller appends an 11-character suffix for its Jobs, whose names stop at 63.
  if (name.length > 52) errs.push(invalid('metadata.name', name, 'must be no more than 52 characters'));
  const schedule = asStr(s.schedule);
  if (!schedule) errs.push(required('spec.schedule', ''));
  else {
    const err = cronError(schedule);
    if (err) errs.push(invalid('spec.schedule', schedule, err));
    if (isSet(s.timeZone) && schedule.includes('TZ'))
      errs.push(
        invalid('spec.schedule', schedule, 'cannot use both timeZone field and TZ or CRON_TZ in schedule'),
      );
    else if (!allowTZ && schedule.includes('TZ'))
      errs.push(
        invalid(
          'spec.schedule',
          schedule,
          'cannot use TZ or CRON_TZ in schedule, use timeZone field instead',
        ),
      );
  }
  errs.push(...validateNonnegative(s.startingDeadlineSeconds, 'spec.startingDeadlineSeconds'));
  const cp = asStr(s.concurrencyPolicy);
  if (!cp) errs.push(required('spec.concurrencyPolicy', ''));
  else if (!CONCURRENCY.includes(cp)) errs.push(notSupported('spec.concurrencyPolicy', cp, CONCURRENCY));
  const jt = asObj(s.jobTemplate) ?? {};
  errs.push(...validateJobSpec(asObj(jt.spec) ?? {}, 'spec.jobTemplate.spec', false));
  errs.push(...validateNonnegative(s.successfulJobsHistoryLimit, 'spec.successfulJobsHistoryLimit'));
  errs.push(...validateNonnegative(s.failedJobsHistoryLimit, 'spec.failedJobsHistoryLimit'));
  return errs;
}

registerKindRules('batch', 'CronJob', {
  validate: (o) => validateCronJob(o, false),
  // A schedule that already carried TZ= may keep it.
  validateUpdate: (o, old) => validateCronJob(o, asStr(spec(old).schedule).includes('TZ')),
  updateOnly: true,
});

// --- cron ------------------------------------------------------------------------

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const BOUNDS: [number, number, Record<string, number> | undefined][] = [
  [0, 59, undefined],
  [0, 23, undefined],
  [1, 31, undefined],
  [1, 12, Object.fromEntries(MONTHS.map((m, i) => [m, i + 1]))],
  [0, 6, Object.fromEntries(DAYS.map((d, i) => [d, i]))],
];
const DESCRIPTORS = new Set([
  '@yearly',
  '@annually',
  '@monthly',
  '@weekly',
  '@daily',
  '@midnight',
  '@hourly',
]);

function atoi(expr: string): number {
  if (!/^[+-]?\d+$/.test(expr))
    throw new Error(
      `failed to parse int from ${expr}: strconv.Atoi: parsing ${JSON.stringify(expr)}: invalid syntax`,
    );
  const n = Number(expr);
  if (n < 0) throw new Error(`negative number (${n}) not allowed: ${expr}`);
  return n;
}

function checkRange(expr: string, [min, max, names]: (typeof BOUNDS)[number]): void {
  const rangeAndStep = expr.split('/');
  const lowHigh = rangeAndStep[0].split('-');
  const num = (s: string) => (names && s.toLowerCase() in names ? names[s.toLowerCase()] : atoi(s));
  let start: number;
  let end: number;
  if (lowHigh[0] === '*' || lowHigh[0] === '?') {
    start = min;
    end = max;
  } else {
    start = num(lowHigh[0]);
    if (lowHigh.length === 1) end = start;
    else if (lowHigh.length === 2) end = num(lowHigh[1]);
    else throw new Error(`too many hyphens: ${expr}`);
  }
  let step = 1;
  if (rangeAndStep.length === 2) {
    step = atoi(rangeAndStep[1]);
    if (lowHigh.length === 1) end = max;
  } else if (rangeAndStep.length > 2) throw new Error(`too many slashes: ${expr}`);
  if (start < min) throw new Error(`beginning of range (${start}) below minimum (${min}): ${expr}`);
  if (end > max) throw new Error(`end of range (${end}) above maximum (${max}): ${expr}`);
  if (start > end) throw new Error(`beginning of range (${start}) beyond end of range (${end}): ${expr}`);
  if (step === 0) throw new Error(`step of range should be a positive number: ${expr}`);
}

/** robfig/cron ParseStandard's error for a schedule, or undefined when valid. */
export function cronError(schedule: string): string | undefined {
  let spec = schedule;
  if (spec.length === 0) return 'empty spec string';
  if (spec.startsWith('TZ=') || spec.startsWith('CRON_TZ=')) {
    const i = spec.indexOf(' ');
    spec = i < 0 ? '' : spec.slice(i).trim();
  }
  if (spec.startsWith('@')) {
    if (DESCRIPTORS.has(spec)) return undefined;
    if (spec.startsWith('@every ')) {
      const d = spec.slice(7);
      return /^([0-9]*(\.[0-9]*)?(ns|us|µs|ms|s|m|h))+$/.test(d)
        ? undefined
        : `failed to parse duration ${d}: time: invalid duration "${d}"`;
    }
    return `unrecognized descriptor: ${spec}`;
  }
  const fields = spec.split(/\s+/).filter(Boolean);
  if (fields.length !== 5) return `expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`;
  try {
    fields.forEach((f, i) => f.split(',').forEach((e) => checkRange(e, BOUNDS[i])));
  } catch (e) {
    return (e as Error).message;
  }
  return undefined;
}
