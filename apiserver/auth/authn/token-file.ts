// Static tokens (--token-auth-file): a CSV of token,user,uid[,"group1,group2"].
import { readFileSync } from 'node:fs';
import { logger } from '../../../shared/log';
import type { UserInfo } from '../../registry/context';
import type { AuthResponse, TokenAuthenticator } from './authenticator';

const log = logger('auth/token-file');

/** Parses CSV records (quotes, doubled quotes, leading spaces trimmed like Go's encoding/csv with TrimLeadingSpace). */
export function parseCSV(text: string): string[][] {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let quoted = false;
  let atStart = true;
  const endField = () => {
    record.push(field);
    field = '';
    atStart = true;
  };
  const endRecord = () => {
    endField();
    if (!(record.length === 1 && record[0] === '')) records.push(record);
    record = [];
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else field += c;
      continue;
    }
    if (atStart && (c === ' ' || c === '\t')) continue;
    if (atStart && c === '"') {
      quoted = true;
      atStart = false;
      continue;
    }
    atStart = false;
    if (c === ',') endField();
    else if (c === '\n') endRecord();
    else if (c === '\r') continue;
    else field += c;
  }
  if (field !== '' || record.length) endRecord();
  return records;
}

export class TokenFileAuthenticator implements TokenAuthenticator {
  readonly name = 'token-file';
  private readonly tokens = new Map<string, UserInfo>();

  constructor(file: string) {
    const records = parseCSV(readFileSync(file, 'utf8'));
    records.forEach((rec, i) => {
      if (rec.length < 3)
        throw new Error(
          `token file '${file}' must have at least 3 columns (token, user name, user uid), found ${rec.length}`,
        );
      const [token, name, uid] = rec;
      if (!token) {
        log.warn('empty token in token file', { file, line: i + 1 });
        return;
      }
      if (this.tokens.has(token)) log.warn('duplicate token in token file', { file, line: i + 1 });
      const groups =
        rec.length >= 4 && rec[3]
          ? rec[3]
              .split(',')
              .map((g) => g.trim())
              .filter(Boolean)
          : [];
      this.tokens.set(token, { name, uid, groups });
    });
  }

  authenticateToken(token: string): AuthResponse | null {
    const u = this.tokens.get(token);
    if (!u) return null;
    return { user: { ...u, groups: [...u.groups] } };
  }
}
