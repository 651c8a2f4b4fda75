// Image references as the runtime stores them: docker.io/library/ for short
// names, :latest when no tag or digest is given (the distribution reference
// rules kubelet and containerd apply).

/** docker.io normalisation of an image reference (repository, and tag or digest). */
export function normalizeImage(image: string): { repository: string; tag: string } {
  let name = image;
  let tag = 'latest';
  const at = name.indexOf('@');
  if (at >= 0) {
    tag = name.slice(at + 1);
    name = name.slice(0, at);
  } else {
    const slash = name.lastIndexOf('/');
    const colon = name.lastIndexOf(':');
    if (colon > slash) {
      tag = name.slice(colon + 1);
      name = name.slice(0, colon);
    }
  }
  const first = name.split('/')[0];
  const hasRegistry =
    name.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
  if (!hasRegistry) name = name.includes('/') ? `docker.io/${name}` : `docker.io/library/${name}`;
  return { repository: name, tag };
}

/** The full name a runtime lists an image under: repository:tag or repository@digest. */
export function fullImageName(image: string): string {
  const { repository, tag } = normalizeImage(image);
  return tag.startsWith('sha256:') ? `${repository}@${tag}` : `${repository}:${tag}`;
}
