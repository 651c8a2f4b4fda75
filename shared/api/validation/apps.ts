// apps/v1: Deployment, ReplicaSet, StatefulSet, DaemonSet (pkg/apis/apps/validation).
import type { FieldError } from '../field-errors';
import { forbidden, invalid, notSupported, required } from '../field-errors';
import {
  isEmptySelector,
  selectorMatches,
  semanticEqual,
  validateImmutableField,
  validateLabelSelector,
  validateNonnegative,
} from './metadata';
import { isValidPercent } from './names';
import { asArr, asObj, asStr, asStrMap, child, isSet, type Obj } from './path';
import { validatePodTemplateSpec } from './core';
import type { PodSpecContext } from './pod-spec';
import { registerKindRules } from './registry';

const spec = (o: Obj) => asObj(o.spec) ?? {};

export function validatePositiveIntOrPercent(v: unknown, p: string): FieldError[] {
  if (typeof v === 'string') return isValidPercent(v).map((m) => invalid(p, v, m));
  if (typeof v === 'number') return validateNonnegative(v, p);
  return [];
}

/** Integer value of an int-or-percent (percent as its number), like getIntOrPercentValue. */
export function intOrPercentValue(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') {
    const n = parseInt(v.replace(/%$/, ''), 10);
    return Number.isNaN(n) ? 0 : n;
  }
  return 0;
}

export function isNotMoreThan100Percent(v: unknown, p: string): FieldError[] {
  if (typeof v === 'string' && v.endsWith('%') && intOrPercentValue(v) > 100)
    return [invalid(p, v, 'must not be greater than 100%')];
  return [];
}

/** Selector present, valid, non-empty, matching the template; template valid with restartPolicy Always. */
function validateSelectorAndTemplate(
  s: Obj,
  kindWord: string,
  what: string,
  podCtx: PodSpecContext = {},
): FieldError[] {
  const errs: FieldError[] = [];
  if (!isSet(s.selector)) errs.push(required('spec.selector', ''));
  else {
    errs.push(...validateLabelSelector(s.selector, 'spec.selector'));
    if (isEmptySelector(s.selector))
      errs.push(invalid('spec.selector', s.selector, `empty selector is invalid for ${kindWord}`));
  }
  const tpl = asObj(s.template) ?? {};
  const labels = asStrMap(asObj(tpl.metadata)?.labels);
  if (isSet(s.selector) && !isEmptySelector(s.selector) && !selectorMatches(s.selector, labels))
    errs.push(
      invalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`'),
    );
  errs.push(...validatePodTemplateSpec(tpl, 'spec.template', podCtx));
  const tspec = asObj(tpl.spec) ?? {};
  const rp = asStr(tspec.restartPolicy);
  if (rp !== 'Always') errs.push(notSupported('spec.template.spec.restartPolicy', rp, ['Always']));
  if (isSet(tspec.activeDeadlineSeconds))
    errs.push(
      forbidden(
        'spec.template.spec.activeDeadlineSeconds',
        `activeDeadlineSeconds in ${what} is not Supported`,
      ),
    );
  return errs;
}

const selectorImmutable = (o: Obj, old: Obj) =>
  validateImmutableField(spec(o).selector, spec(old).selector, 'spec.selector');

registerKindRules('apps', 'Deployment', {
  validate(o) {
    const s = spec(o);
    const errs = validateNonnegative(s.replicas, 'spec.replicas');
    errs.push(...validateSelectorAndTemplate(s, 'deployment', 'ReplicaSet'));
    const strategy = asObj(s.strategy) ?? {};
    const ru = asObj(strategy.rollingUpdate);
    switch (strategy.type) {
      case 'Recreate':
        if (isSet(strategy.rollingUpdate))
          errs.push(
            forbidden(
              'spec.strategy.rollingUpdate',
              "may not be specified when strategy `type` is 'Recreate'",
            ),
          );
        break;
      case 'RollingUpdate':
        if (!ru)
          errs.push(required('spec.strategy.rollingUpdate', 'this should be defaulted and never be nil'));
        else {
          const p = 'spec.strategy.rollingUpdate';
          errs.push(...validatePositiveIntOrPercent(ru.maxUnavailable, child(p, 'maxUnavailable')));
          errs.push(...validatePositiveIntOrPercent(ru.maxSurge, child(p, 'maxSurge')));
          if (intOrPercentValue(ru.maxUnavailable) === 0 && intOrPercentValue(ru.maxSurge) === 0)
            errs.push(
              invalid(
                child(p, 'maxUnavailable'),
                ru.maxUnavailable ?? null,
                'may not be 0 when `maxSurge` is 0',
              ),
            );
          errs.push(...isNotMoreThan100Percent(ru.maxUnavailable, child(p, 'maxUnavailable')));
        }
        break;
      default:
        errs.push(notSupported('spec.strategy', strategy, ['Recreate', 'RollingUpdate']));
    }
    errs.push(...validateNonnegative(s.minReadySeconds, 'spec.minReadySeconds'));
    errs.push(...validateNonnegative(s.revisionHistoryLimit, 'spec.revisionHistoryLimit'));
    if (typeof s.progressDeadlineSeconds === 'number') {
      errs.push(...validateNonnegative(s.progressDeadlineSeconds, 'spec.progressDeadlineSeconds'));
      if (s.progressDeadlineSeconds <= (typeof s.minReadySeconds === 'number' ? s.minReadySeconds : 0))
        errs.push(
          invalid(
            'spec.progressDeadlineSeconds',
            s.progressDeadlineSeconds,
            'must be greater than minReadySeconds',
          ),
        );
    }
    return errs;
  },
  validateUpdate: selectorImmutable,
});

registerKindRules('apps', 'ReplicaSet', {
  validate(o) {
    const s = spec(o);
    // ReplicaSet reuses the Deployment wording for an empty selector.
    return [
      ...validateNonnegative(s.replicas, 'spec.replicas'),
      ...validateNonnegative(s.minReadySeconds, 'spec.minReadySeconds'),
      ...validateSelectorAndTemplate(s, 'deployment', 'ReplicaSet'),
    ];
  },
  validateUpdate: selectorImmutable,
});

registerKindRules('apps', 'DaemonSet', {
  validate(o) {
    const s = spec(o);
    const errs = validateSelectorAndTemplate(s, 'daemonset', 'DaemonSet');
    errs.push(...validateNonnegative(s.minReadySeconds, 'spec.minReadySeconds'));
    errs.push(...validateNonnegative(s.revisionHistoryLimit, 'spec.revisionHistoryLimit'));
    const us = asObj(s.updateStrategy) ?? {};
    const p = 'spec.updateStrategy';
    switch (us.type) {
      case 'OnDelete':
        break;
      case 'RollingUpdate': {
        const ru = asObj(us.rollingUpdate);
        if (!ru) {
          errs.push(required(child(p, 'rollingUpdate'), ''));
          break;
        }
        const rp = child(p, 'rollingUpdate');
        errs.push(...validatePositiveIntOrPercent(ru.maxUnavailable, child(rp, 'maxUnavailable')));
        errs.push(...validatePositiveIntOrPercent(ru.maxSurge, child(rp, 'maxSurge')));
        errs.push(...isNotMoreThan100Percent(ru.maxUnavailable, child(rp, 'maxUnavailable')));
        errs.push(...isNotMoreThan100Percent(ru.maxSurge, child(rp, 'maxSurge')));
        const unavailable = intOrPercentValue(ru.maxUnavailable) !== 0;
        const surge = intOrPercentValue(ru.maxSurge) !== 0;
        if (unavailable && surge)
          errs.push(
            invalid(child(rp, 'maxSurge'), ru.maxSurge, 'may not be set when maxUnavailable is non-zero'),
          );
        else if (!unavailable && !surge)
          errs.push(required(child(rp, 'maxUnavailable'), 'cannot be 0 when maxSurge is 0'));
        break;
      }
      default:
        errs.push(notSupported(p, us, ['RollingUpdate', 'OnDelete']));
    }
    return errs;
  },
  validateUpdate: selectorImmutable,
});

const STS_MUTABLE = [
  'replicas',
  'ordinals',
  'template',
  'updateStrategy',
  'revisionHistoryLimit',
  'persistentVolumeClaimRetentionPolicy',
  'minReadySeconds',
];

registerKindRules('apps', 'StatefulSet', {
  validate(o) {
    const s = spec(o);
    const errs: FieldError[] = [];
    const pmp = asStr(s.podManagementPolicy);
    if (!pmp) errs.push(required('spec.podManagementPolicy', ''));
    else if (pmp !== 'OrderedReady' && pmp !== 'Parallel')
      errs.push(invalid('spec.podManagementPolicy', pmp, "must be 'OrderedReady' or 'Parallel'"));
    const us = asObj(s.updateStrategy) ?? {};
    switch (us.type) {
      case undefined:
      case '':
        errs.push(required('spec.updateStrategy', ''));
        break;
      case 'OnDelete':
        if (isSet(us.rollingUpdate))
          errs.push(
            invalid(
              'spec.updateStrategy.rollingUpdate',
              us.rollingUpdate,
              "only allowed for updateStrategy 'RollingUpdate'",
            ),
          );
        break;
      case 'RollingUpdate': {
        const ru = asObj(us.rollingUpdate);
        if (ru) {
          errs.push(...validateNonnegative(ru.partition, 'spec.updateStrategy.rollingUpdate.partition'));
          if (isSet(ru.maxUnavailable)) {
            const mp = 'spec.updateStrategy.rollingUpdate.maxUnavailable';
            errs.push(...validatePositiveIntOrPercent(ru.maxUnavailable, mp));
            if (intOrPercentValue(ru.maxUnavailable) === 0)
              errs.push(invalid(mp, ru.maxUnavailable, 'must be greater than 0'));
            errs.push(...isNotMoreThan100Percent(ru.maxUnavailable, mp));
          }
        }
        break;
      }
      default:
        errs.push(invalid('spec.updateStrategy', us, "must be 'RollingUpdate' or 'OnDelete'"));
    }
    const retention = asObj(s.persistentVolumeClaimRetentionPolicy);
    if (retention)
      for (const f of ['whenDeleted', 'whenScaled']) {
        const v = asStr(retention[f]);
        if (v !== 'Retain' && v !== 'Delete')
          errs.push(notSupported(`spec.persistentVolumeClaimRetentionPolicy.${f}`, v, ['Retain', 'Delete']));
      }
    errs.push(...validateNonnegative(s.replicas, 'spec.replicas'));
    errs.push(...validateNonnegative(asObj(s.ordinals)?.start, 'spec.ordinals.start'));
    errs.push(...validateNonnegative(s.minReadySeconds, 'spec.minReadySeconds'));
    // Each pod gets a volume per claim template, so mounts may name one.
    const claimTemplates = asArr(s.volumeClaimTemplates)
      .map((t) => asStr(asObj(asObj(t)?.metadata)?.name))
      .filter(Boolean);
    errs.push(
      ...validateSelectorAndTemplate(s, 'statefulset', 'StatefulSet', { addedVolumes: claimTemplates }),
    );
    return errs;
  },
  validateUpdate(o, old) {
    const strip = (s: Obj) => Object.fromEntries(Object.entries(s).filter(([k]) => !STS_MUTABLE.includes(k)));
    if (semanticEqual(strip(spec(o)), strip(spec(old)))) return [];
    return [
      forbidden(
        'spec',
        "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
      ),
    ];
  },
});
