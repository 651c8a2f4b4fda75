// Which controllers run: every descriptor the manager knows (core,
// workload and volume lists), and kube-controller-manager's --controllers rules:
// '*' = all on-by-default ones, 'foo' enables foo, '-foo' disables it, the
// first entry naming a controller wins, names may be aliases.
import type { ControllerDescriptor } from '../controller';
import { coreControllers } from '../controllers/core-controllers';
import { workloadControllers } from '../controllers/workload-controllers';
import { volumeControllers } from '../controllers/volume-controllers';

/** Every controller of the manager. */
export function allControllers(): ControllerDescriptor[] {
  return [...coreControllers, ...workloadControllers, ...volumeControllers];
}

export class ControllerSelection {
  private readonly canonical = new Map<string, string>();

  constructor(readonly descriptors: ControllerDescriptor[]) {
    for (const d of descriptors) {
      this.canonical.set(d.name, d.name);
      for (const a of d.aliases ?? []) this.canonical.set(a, d.name);
    }
  }

  names(): string[] {
    return this.descriptors.map((d) => d.name);
  }

  disabledByDefault(): string[] {
    return this.descriptors.filter((d) => d.disabledByDefault).map((d) => d.name);
  }

  /** Errors for names --controllers does not know (kube: `"foo" is not in the list of known controllers`). */
  validate(selectors: string[]): string[] {
    const errs: string[] = [];
    for (const s of selectors) {
      if (s === '*') continue;
      const name = s.startsWith('-') ? s.slice(1) : s;
      if (!this.canonical.has(name))
        errs.push(`${JSON.stringify(name)} is not in the list of known controllers`);
    }
    return errs;
  }

  /** app.IsControllerEnabled with aliases resolved. */
  enabled(d: ControllerDescriptor, selectors: string[]): boolean {
    let star = false;
    for (const s of selectors) {
      if (s === '*') {
        star = true;
        continue;
      }
      const off = s.startsWith('-');
      const name = this.canonical.get(off ? s.slice(1) : s);
      if (name === d.name) return !off;
    }
    return star && !d.disabledByDefault;
  }

  /** The descriptors to start, in registration order. */
  select(selectors: string[]): ControllerDescriptor[] {
    return this.descriptors.filter((d) => this.enabled(d, selectors));
  }
}
