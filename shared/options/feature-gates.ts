// --feature-gates: the gates of SPEC.md with their stage and default. Beta
// gates are on by default, alpha off; GA gates are locked to true and inert;
// AllAlpha/AllBeta switch every gate of their stage not set explicitly.

export type Stage = 'ALPHA' | 'BETA' | 'GA' | 'DEPRECATED';

export interface FeatureSpec {
  stage: Stage;
  default: boolean;
  /** Setting it against its default is an error. */
  locked?: boolean;
}

const beta = (on: boolean): FeatureSpec => ({ stage: 'BETA', default: on });
const alpha: FeatureSpec = { stage: 'ALPHA', default: false };
const ga: FeatureSpec = { stage: 'GA', default: true, locked: true };

const BETA_ON = [
  'APIListChunking',
  'APIPriorityAndFairness',
  'APIResponseCompression',
  'AnyVolumeDataSource',
  'AppArmor',
  'CPUManager',
  'CPUManagerPolicyBetaOptions',
  'CPUManagerPolicyOptions',
  'CSIInlineVolume',
  'CSIMigration',
  'DaemonSetUpdateSurge',
  'DelegateFSGroupToCSIDriver',
  'DevicePlugins',
  'DisableAcceleratorUsageMetrics',
  'DownwardAPIHugePages',
  'EndpointSliceTerminatingCondition',
  'EphemeralContainers',
  'GRPCContainerProbe',
  'GracefulNodeShutdown',
  'GracefulNodeShutdownBasedOnPodPriority',
  'IdentifyPodOS',
  'JobMutableNodeSchedulingDirectives',
  'JobReadyPods',
  'LegacyServiceAccountTokenNoAutoGeneration',
  'LocalStorageCapacityIsolation',
  'LogarithmicScaleDown',
  'MemoryManager',
  'MixedProtocolLBService',
  'NetworkPolicyEndPort',
  'OpenAPIEnums',
  'OpenAPIV3',
  'PodDeletionCost',
  'PodSecurity',
  'RemainingItemCount',
  'RotateKubeletServerCertificate',
  'ServiceInternalTrafficPolicy',
  'SizeMemoryBackedVolumes',
  'StatefulSetMinReadySeconds',
  'StorageVersionHash',
  'TopologyAwareHints',
  'TopologyManager',
  'WinOverlay',
  'WindowsHostProcessContainers',
  'KubeletCredentialProviders',
  'KubeletPodResources',
  'KubeletPodResourcesGetAllocatable',
  'CSIMigrationAWS',
  'CSIMigrationAzureDisk',
  'CSIMigrationGCE',
  'CSIMigrationOpenStack',
];
const BETA_OFF = [
  'ExperimentalHostUserNamespaceDefaulting',
  'JobTrackingWithFinalizers',
  'ProbeTerminationGracePeriod',
  'CSIMigrationAzureFile',
];
const ALPHA_OFF = [
  'APIServerIdentity',
  'APIServerTracing',
  'CPUManagerPolicyAlphaOptions',
  'ContextualLogging',
  'CronJobTimeZone',
  'CustomCPUCFSQuotaPeriod',
  'CustomResourceValidationExpressions',
  'DisableCloudProviders',
  'DisableKubeletCloudCredentialProviders',
  'ExpandedDNSConfig',
  'HPAContainerMetrics',
  'HPAScaleToZero',
  'HonorPVReclaimPolicy',
  'KubeletInUserNamespace',
  'LocalStorageCapacityIsolationFSQuotaMonitoring',
  'MaxUnavailableStatefulSet',
  'MemoryQoS',
  'MinDomainsInPodTopologySpread',
  'NetworkPolicyStatus',
  'NodeOutOfServiceVolumeDetach',
  'NodeSwap',
  'PodAndContainerStatsFromCRI',
  'ProcMountType',
  'ProxyTerminatingEndpoints',
  'QOSReserved',
  'ReadWriteOncePod',
  'RecoverVolumeExpansionFailure',
  'SeccompDefault',
  'ServerSideFieldValidation',
  'ServiceIPStaticSubrange',
  'StatefulSetAutoDeletePVC',
  'StorageVersionAPI',
  'VolumeCapacityPriority',
  'WinDSR',
  'CSIMigrationPortworx',
  'CSIMigrationRBD',
  'CSIMigrationvSphere',
  'InTreePluginAWSUnregister',
  'InTreePluginAzureDiskUnregister',
  'InTreePluginAzureFileUnregister',
  'InTreePluginGCEUnregister',
  'InTreePluginOpenStackUnregister',
  'InTreePluginPortworxUnregister',
  'InTreePluginRBDUnregister',
  'InTreePluginvSphereUnregister',
];
// Graduated gates: accepted (locked to true) so old command lines keep working.
const GA = [
  'ServerSideApply',
  'WatchBookmark',
  'ImmutableEphemeralVolumes',
  'EndpointSlice',
  'StartupProbe',
  'CSIStorageCapacity',
];
const DEPRECATED: Record<string, FeatureSpec> = {
  // Kept for one more release after removal was announced.
  DynamicKubeletConfig: { stage: 'DEPRECATED', default: false },
};

export const KNOWN_FEATURES: Record<string, FeatureSpec> = {
  AllAlpha: alpha,
  AllBeta: beta(false),
  ...Object.fromEntries(BETA_ON.map((n) => [n, beta(true)])),
  ...Object.fromEntries(BETA_OFF.map((n) => [n, beta(false)])),
  ...Object.fromEntries(ALPHA_OFF.map((n) => [n, alpha])),
  ...Object.fromEntries(GA.map((n) => [n, ga])),
  ...DEPRECATED,
};

export class FeatureGates {
  private readonly values = new Map<string, boolean>();
  readonly warnings: string[] = [];

  constructor(readonly known: Record<string, FeatureSpec> = KNOWN_FEATURES) {}

  /** Applies --feature-gates; throws on unknown gates, bad values and locked gates. */
  set(settings: Record<string, string | boolean> | undefined): this {
    const parsed = new Map<string, boolean>();
    for (const [name, raw] of Object.entries(settings ?? {})) {
      const spec = this.known[name];
      if (!spec) throw new Error(`unrecognized feature gate: ${name}`);
      const v = typeof raw === 'boolean' ? raw : raw === 'true' ? true : raw === 'false' ? false : undefined;
      if (v === undefined)
        throw new Error(
          `invalid value of ${name}=${String(raw)}, err: strconv.ParseBool: parsing "${String(raw)}": invalid syntax`,
        );
      if (spec.locked && v !== spec.default)
        throw new Error(`cannot set feature gate ${name} to ${v}, feature is locked to ${spec.default}`);
      if (spec.stage === 'DEPRECATED')
        this.warnings.push(
          `Setting deprecated feature gate ${name}=${v}. It will be removed in a future release.`,
        );
      if (spec.stage === 'GA')
        this.warnings.push(`Setting GA feature gate ${name}=${v}. It will be removed in a future release.`);
      parsed.set(name, v);
    }
    for (const [name, v] of parsed) this.values.set(name, v);
    // AllAlpha / AllBeta fill in every gate of their stage that was not set itself.
    for (const [all, stage] of [
      ['AllAlpha', 'ALPHA'],
      ['AllBeta', 'BETA'],
    ] as const) {
      if (!parsed.has(all)) continue;
      for (const [name, spec] of Object.entries(this.known)) {
        if (spec.stage === stage && !name.startsWith('All') && !parsed.has(name))
          this.values.set(name, parsed.get(all)!);
      }
    }
    return this;
  }

  /** Back to the defaults (tests that start several servers in one process). */
  reset(): void {
    this.values.clear();
    this.warnings.length = 0;
  }

  enabled(name: string): boolean {
    const v = this.values.get(name);
    if (v !== undefined) return v;
    const spec = this.known[name];
    if (!spec) throw new Error(`feature "${name}" is not registered in FeatureGate`);
    return spec.default;
  }

  /** "Name=true|false" of every gate, for --help and logs. */
  describe(): string[] {
    return Object.entries(this.known)
      .filter(([, s]) => s.stage !== 'GA')
      .map(([n, s]) => `${n}=true|false (${s.stage} - default=${s.default})`)
      .sort();
  }
}

/** The process-wide gates (each executable sets them once from its flags). */
export const featureGates = new FeatureGates();
