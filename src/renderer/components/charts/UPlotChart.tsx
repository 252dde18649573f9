// A uPlot chart as a React component: the plot is created once on mount (and again only when its
// options change), new data is handed to setData, the width follows the container through a
// ResizeObserver, and the plot is destroyed on unmount. The canvas says nothing to assistive
// tech, so the figure carries an aria-label and a caption; with no data the caption's empty text
// shows instead of an empty plot.
import { useEffect, useRef, type ReactNode } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface UPlotChartProps {
  /** What the chart shows, for assistive tech (aria-label of the figure). */
  label: string;
  /** Visible caption under the chart. */
  caption?: ReactNode;
  /** Options without width and height (they come from the container and `height`). Keep the object stable. */
  options: Omit<uPlot.Options, 'width' | 'height'>;
  data: uPlot.AlignedData;
  height?: number;
  /** Shown instead of the plot when there is nothing to draw. */
  empty?: string | null;
  testId?: string;
}

export function UPlotChart({ label, caption, options, data, height = 220, empty, testId }: UPlotChartProps) {
  const box = useRef<HTMLDivElement | null>(null);
  const plot = useRef<uPlot | null>(null);
  const latest = useRef(data);
  const showEmpty = !!empty;

  // Declared first, so the plot created below starts from the newest data.
  useEffect(() => {
    latest.current = data;
  });

  useEffect(() => {
    const el = box.current;
    if (!el || showEmpty) return;
    const width = Math.max(200, Math.floor(el.clientWidth));
    const u = new uPlot({ ...options, width, height }, latest.current, el);
    plot.current = u;
    const ro = new ResizeObserver((entries) => {
      const w = Math.floor(entries[0]?.contentRect.width ?? 0);
      if (w > 0 && w !== u.width) u.setSize({ width: w, height });
    });
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, [options, height, showEmpty]);

  useEffect(() => {
    plot.current?.setData(data);
  }, [data]);

  return (
    <figure className="chart" aria-label={label} data-testid={testId}>
      {showEmpty ? (
        <div className="chart-empty" data-testid="chart-empty" style={{ minHeight: height / 2 }}>
          {empty}
        </div>
      ) : (
        <div ref={box} className="chart-plot" />
      )}
      {caption && <figcaption className="chart-caption">{caption}</figcaption>}
    </figure>
  );
}
