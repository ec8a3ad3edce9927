import type { MinuteTries } from './tries-per-minute';

const WIDTH = 600;
const HEIGHT = 120;
const BAR = WIDTH / 60;
/** Stacked bottom to top in this order, with the colours the stylesheet's legend uses. */
const SERIES = [
  ['processed', '#15803d'],
  ['retried', '#b45309'],
  ['dead', '#b91c1c'],
] as const;

/**
 * The last hour's tries as an SVG bar chart, one stacked bar a minute, drawn on the server so the
 * first paint has it (the script redraws it from the same numbers). Presentation attributes only: the
 * CSP allows no inline style. Its text alternative sums the hour for screen readers.
 */
export function triesChart(hour: readonly MinuteTries[]): string {
  const most = Math.max(1, ...hour.map((m) => m.processed + m.retried + m.dead));
  const totals = { processed: 0, retried: 0, dead: 0 };
  const bars: string[] = [];
  hour.forEach((minute, i) => {
    let y = HEIGHT;
    for (const [name, colour] of SERIES) {
      totals[name] += minute[name];
      if (minute[name] === 0) continue;
      const h = (minute[name] / most) * (HEIGHT - 4);
      y -= h;
      bars.push(
        `<rect x="${(i * BAR).toFixed(1)}" y="${y.toFixed(1)}" width="${(BAR - 1).toFixed(1)}" height="${h.toFixed(1)}" fill="${colour}"><title>${new Date(minute.at).toISOString().slice(11, 16)} UTC: ${minute[name]} ${name}</title></rect>`,
      );
    }
  });
  const label = `Tries per minute, last hour: ${totals.processed} processed, ${totals.retried} retried, ${totals.dead} dead; the busiest minute had ${most === 1 && totals.processed + totals.retried + totals.dead === 0 ? 0 : most}.`;
  return `<svg id="tries-chart" data-testid="tries-chart" role="img" aria-label="${label}" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}" xmlns="http://www.w3.org/2000/svg"><rect x="0" y="0" width="${WIDTH}" height="${HEIGHT}" fill="#f8fafc"/>${bars.join('')}</svg>`;
}
