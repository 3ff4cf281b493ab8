/**
 * Pure: the candidate closest to `word` by edit distance, if it is close enough to be a likely
 * typo (at most a third of the word's length, and at least one edit allowed); otherwise null.
 */
export function nearestName(word: string, candidates: Iterable<string>): string | null {
  let best: string | null = null;
  let bestDistance = Math.max(1, Math.floor(word.length / 3));
  for (const candidate of candidates) {
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (
      distance <= bestDistance &&
      (best === null || distance < editDistance(word.toLowerCase(), best.toLowerCase()))
    ) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** Edit distance where swapping two neighbouring letters ("wrok") is one edit (optimal string alignment). */
function editDistance(a: string, b: string): number {
  let beforePrevious: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      let distance = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, substitution);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        distance = Math.min(distance, (beforePrevious[j - 2] as number) + 1);
      current[j] = distance;
    }
    beforePrevious = previous;
    previous = current;
  }
  return previous[b.length] as number;
}
