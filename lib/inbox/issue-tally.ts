import type { InboxIssue } from './inbox-issue';
import type { IssueRef } from './issue-refs';

/** How many event ids an issue keeps as samples. */
export const SAMPLES = 5;
/**
 * The most distinct issues one read tracks: past it, dead letters of new issues are not counted (a
 * fingerprint that masks too little would otherwise grow the tally with the dead letters).
 */
export const MAX_TRACKED_ISSUES = 10_000;

/** Issues counted from dead letters (or from groups of them) as a walk reads them. */
export interface IssueTally {
  /** Counts `count` dead letters of `ref` (sample ids newest first) failed between the two times. */
  add(
    type: string,
    ref: IssueRef,
    group: { count: number; firstSeen: Date; lastSeen: Date; sampleEventIds: readonly string[] },
  ): void;
  /** The issues, newest `lastSeen` first, at most `limit`, those seen at or after `since`. */
  list(query: { since?: Date | undefined; limit: number }): InboxIssue[];
}

export function issueTally(): IssueTally {
  const issues = new Map<string, InboxIssue>();
  return {
    add(type, ref, group) {
      const known = issues.get(ref.key);
      if (known === undefined) {
        if (issues.size >= MAX_TRACKED_ISSUES) return;
        issues.set(ref.key, {
          key: ref.key,
          type,
          handler: ref.handler,
          error: ref.error,
          count: group.count,
          firstSeen: group.firstSeen,
          lastSeen: group.lastSeen,
          sampleEventIds: group.sampleEventIds.slice(0, SAMPLES),
        });
        return;
      }
      known.count += group.count;
      if (group.firstSeen < known.firstSeen) known.firstSeen = group.firstSeen;
      // Samples stay the newest: the group's go first when it is the newer.
      const newer = group.lastSeen > known.lastSeen;
      if (newer) known.lastSeen = group.lastSeen;
      const samples = newer
        ? [...group.sampleEventIds, ...known.sampleEventIds]
        : [...known.sampleEventIds, ...group.sampleEventIds];
      known.sampleEventIds = [...new Set(samples)].slice(0, SAMPLES);
    },
    list({ since, limit }) {
      return [...issues.values()]
        .filter((issue) => since === undefined || issue.lastSeen >= since)
        .sort((a, b) => b.lastSeen.getTime() - a.lastSeen.getTime() || (a.key < b.key ? -1 : 1))
        .slice(0, limit);
    },
  };
}
