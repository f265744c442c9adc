import { existsSync } from 'node:fs';
import { Resvg } from '@resvg/resvg-js';

/**
 * The cancel-lag distributions as cumulative curves on a log time axis, drawn as SVG and rendered
 * to PNG by resvg (a prebuilt binary from npm: no browser, no system library).
 */
export interface Series {
  label: string;
  colour: string;
  dashed?: boolean;
  valuesMs: readonly number[];
}

const W = 900;
const H = 520;
const M = { left: 70, right: 20, top: 40, bottom: 60 };

export function lagChartSvg(title: string, series: readonly Series[]): string {
  const all = series.flatMap((s) => s.valuesMs).filter((v) => v > 0);
  const lo = 1;
  const hi = Math.max(10, ...all) * 1.2;
  const x = (ms: number) =>
    M.left +
    ((Math.log10(Math.max(lo, ms)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * (W - M.left - M.right);
  const y = (q: number) => H - M.bottom - q * (H - M.top - M.bottom);
  const parts: string[] = [`<rect width="${W}" height="${H}" fill="white"/>`];
  for (let decade = 1; decade <= hi; decade *= 10) {
    parts.push(`<line x1="${x(decade)}" y1="${y(0)}" x2="${x(decade)}" y2="${y(1)}" stroke="#ddd"/>`);
    parts.push(
      `<text x="${x(decade)}" y="${y(0) + 18}" text-anchor="middle" font-size="12">${decade >= 1000 ? `${decade / 1000} s` : `${decade} ms`}</text>`,
    );
  }
  for (const q of [0, 0.25, 0.5, 0.75, 0.95, 0.99, 1]) {
    parts.push(`<line x1="${M.left}" y1="${y(q)}" x2="${W - M.right}" y2="${y(q)}" stroke="#eee"/>`);
    parts.push(`<text x="${M.left - 6}" y="${y(q) + 4}" text-anchor="end" font-size="11">${q}</text>`);
  }
  series.forEach((s, i) => {
    const sorted = [...s.valuesMs].sort((a, b) => a - b);
    const step = Math.max(1, Math.floor(sorted.length / 400));
    const points = sorted
      .filter((_, j) => j % step === 0 || j === sorted.length - 1)
      .map((v, j, arr) => `${x(v).toFixed(1)},${y((j + 1) / arr.length).toFixed(1)}`);
    if (points.length > 0) {
      parts.push(
        `<polyline fill="none" stroke="${s.colour}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6,4"' : ''} points="${points.join(' ')}"/>`,
      );
    }
    parts.push(
      `<line x1="${M.left + 10}" y1="${M.top + 10 + i * 18}" x2="${M.left + 40}" y2="${M.top + 10 + i * 18}" stroke="${s.colour}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6,4"' : ''}/>`,
    );
    parts.push(
      `<text x="${M.left + 46}" y="${M.top + 14 + i * 18}" font-size="12">${escape(s.label)} (n=${s.valuesMs.length})</text>`,
    );
  });
  parts.push(`<text x="${W / 2}" y="24" text-anchor="middle" font-size="15">${escape(title)}</text>`);
  parts.push(
    `<text x="${W / 2}" y="${H - 14}" text-anchor="middle" font-size="12">cancel lag = cancelled_at − expires_at (log scale; ≤ 1 ms drawn at 1 ms)</text>`,
  );
  parts.push(
    `<text x="16" y="${H / 2}" font-size="12" transform="rotate(-90 16 ${H / 2})" text-anchor="middle">share of orders cancelled within</text>`,
  );
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="DejaVu Sans, sans-serif">${parts.join('')}</svg>`;
}

export function renderPng(svg: string): Buffer {
  const fontFiles = ['/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf'].filter((f) => existsSync(f));
  return new Resvg(svg, { font: { loadSystemFonts: true, fontFiles, defaultFontFamily: 'DejaVu Sans' } })
    .render()
    .asPng();
}

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;');
}
