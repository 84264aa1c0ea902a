// Nearest-rank percentiles, the same definition ref-reader.c uses, so both readers' figures compare.
export function percentile(sorted, p) {
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1];
}

export function median(values) {
  return percentile(Float64Array.from(values).sort(), 50);
}

export function latencySummary(latenciesNs) {
  const sorted = Float64Array.from(latenciesNs).sort();
  return {
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    p999: percentile(sorted, 99.9),
    max: sorted[sorted.length - 1],
  };
}
