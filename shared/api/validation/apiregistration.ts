// apiregistration.k8s.io/v1 APIService (kube-aggregator's ValidateAPIService).
import type { FieldError } from '../field-errors';
import { invalid, required } from '../field-errors';
import { isDNS1035Label, isDNS1123Subdomain, nameIsPathSegment } from './names';
import { asObj, asStr } from './path';
import { registerKindRules } from './registry';

registerKindRules('apiregistration.k8s.io', 'APIService', {
  validate(o) {
    const s = asObj(o.spec) ?? {};
    const errs: FieldError[] = [];
    const group = asStr(s.group) ?? '';
    const version = asStr(s.version) ?? '';
    // The name must be version.group (its path-segment rule is the metadata check's).
    const name = asStr(asObj(o.metadata)?.name) ?? '';
    const requiredName = `${version}.${group}`;
    if (name && !nameIsPathSegment(name, false).length && name !== requiredName)
      errs.push(invalid('metadata.name', name, `must be \`spec.version+"."+spec.group\`: "${requiredName}"`));
    if (!group && version !== 'v1')
      errs.push(required('spec.group', 'only v1 may have an empty group and it better be legacy kube'));
    if (group) for (const e of isDNS1123Subdomain(group)) errs.push(invalid('spec.group', group, e));
    for (const e of isDNS1035Label(version)) errs.push(invalid('spec.version', version, e));
    const gpm = typeof s.groupPriorityMinimum === 'number' ? s.groupPriorityMinimum : 0;
    if (gpm <= 0 || gpm > 20000)
      errs.push(invalid('spec.groupPriorityMinimum', gpm, 'must be positive and less than 20000'));
    const vp = typeof s.versionPriority === 'number' ? s.versionPriority : 0;
    if (vp <= 0 || vp > 1000)
      errs.push(invalid('spec.versionPriority', vp, 'must be positive and less than 1000'));
    const caBundle = asStr(s.caBundle) ?? '';
    const caBytes = Buffer.from(caBundle, 'base64').length;
    const service = asObj(s.service);
    if (!service) {
      if (caBytes)
        errs.push(invalid('spec.caBundle', `${caBytes} bytes`, 'local APIServices may not have a caBundle'));
      if (s.insecureSkipTLSVerify === true)
        errs.push(
          invalid('spec.insecureSkipTLSVerify', true, 'local APIServices may not have insecureSkipTLSVerify'),
        );
      return errs;
    }
    if (!asStr(service.namespace)) errs.push(required('spec.service.namespace', ''));
    if (!asStr(service.name)) errs.push(required('spec.service.name', ''));
    if (s.insecureSkipTLSVerify === true && caBytes)
      errs.push(invalid('spec.insecureSkipTLSVerify', true, 'may not be true if caBundle is present'));
    return errs;
  },
});
