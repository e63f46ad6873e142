/**
 * The plan graph's view arithmetic, pure (no DOM): zoom limits, fitting, the first view of a big
 * graph, which text is drawn at a zoom (level of detail), and the minimap's mapping. The canvas
 * (graph-canvas.ts) and the minimap (minimap.ts) call these; unit tests call them directly.
 */

/** A pan and zoom: a graph point (gx, gy) is drawn on screen at (x + gx·k, y + gy·k). */
export interface View {
  readonly k: number;
  readonly x: number;
  readonly y: number;
}

/** A rectangle, in graph or screen units as stated where it is used. */
export interface Box {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/** Zoom limits: far enough out for a whole 5 000-task graph, far enough in to read any label. */
export const MIN_ZOOM = 0.01;
export const MAX_ZOOM = 4;
/** A fit never enlarges a small graph beyond this. */
const MAX_FIT_ZOOM = 1.5;
/** Text smaller than this many screen pixels is not drawn: the shapes and colours stay. */
export const MIN_TEXT_PX = 8;
/** The font sizes of the drawing (graph units): a task's label, a group's title. */
export const TASK_FONT = 12;
export const GROUP_FONT = 13;
/** The zoom a graph too big to fit readably opens at: task labels about 10 pixels high. */
export const START_ZOOM = 0.8;
/** The zoom a view moves to when it centres a task too small to read. */
export const READABLE_ZOOM = 1;

export function clampZoom(k: number): number {
  return Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, k));
}

/** Which text is drawn at zoom `k`: each kind only while it is at least MIN_TEXT_PX on screen. */
export interface LevelOfDetail {
  readonly taskLabels: boolean;
  readonly groupLabels: boolean;
}
export function levelOfDetail(k: number): LevelOfDetail {
  return { taskLabels: TASK_FONT * k >= MIN_TEXT_PX, groupLabels: GROUP_FONT * k >= MIN_TEXT_PX };
}

/** The view that shows all of `bounds` inside a `width`×`height` screen with `margin` around it. */
export function fitView(bounds: Box, width: number, height: number, margin: number): View {
  const k = clampZoom(
    Math.min(
      (width - 2 * margin) / Math.max(1, bounds.width),
      (height - 2 * margin) / Math.max(1, bounds.height),
      MAX_FIT_ZOOM,
    ),
  );
  return {
    k,
    x: (width - bounds.width * k) / 2 - bounds.x * k,
    y: Math.max(margin, (height - bounds.height * k) / 2) - bounds.y * k,
  };
}

/**
 * The first view of a graph: the fit when task labels can be read at it; otherwise the graph's
 * start (its top left, where a plan's first tasks are) at START_ZOOM, centred on any axis that
 * fits. A big plan thus opens readable, not as a strip
 * of specks; Fit shows it all.
 */
export function initialView(bounds: Box, width: number, height: number, margin: number): View {
  const fitted = fitView(bounds, width, height, margin);
  if (levelOfDetail(fitted.k).taskLabels) return fitted;
  const k = START_ZOOM;
  const fitsAcross = bounds.width * k <= width - 2 * margin;
  const fitsDown = bounds.height * k <= height - 2 * margin;
  return {
    k,
    x: (fitsAcross ? (width - bounds.width * k) / 2 : margin) - bounds.x * k,
    y: (fitsDown ? (height - bounds.height * k) / 2 : margin) - bounds.y * k,
  };
}

/** Zooms to `k` keeping the graph point under screen point (px, py) where it is. */
export function zoomAbout(view: View, px: number, py: number, wanted: number): View {
  const k = clampZoom(wanted);
  return {
    k,
    x: px - (px - view.x) * (k / view.k),
    y: py - (py - view.y) * (k / view.k),
  };
}

/** The view at zoom `k` that puts graph point (gx, gy) in the middle of a `width`×`height` screen. */
export function centreOn(gx: number, gy: number, k: number, width: number, height: number): View {
  return { k, x: width / 2 - gx * k, y: height / 2 - gy * k };
}

/** The part of the graph (graph units) a view shows on a `width`×`height` screen. */
export function visibleBox(view: View, width: number, height: number): Box {
  return {
    x: -view.x / view.k,
    y: -view.y / view.k,
    width: width / view.k,
    height: height / view.k,
  };
}

/** Whether `inner` lies wholly inside `outer`. */
export function contains(outer: Box, inner: Box): boolean {
  return (
    inner.x >= outer.x &&
    inner.y >= outer.y &&
    inner.x + inner.width <= outer.x + outer.width &&
    inner.y + inner.height <= outer.y + outer.height
  );
}

/** How graph units map onto the minimap: minimap point = offset + (graph point − bounds' corner) · scale. */
export interface MinimapFrame {
  readonly scale: number;
  readonly offsetX: number;
  readonly offsetY: number;
  readonly bounds: Box;
}

/** Fits `bounds` into a `width`×`height` minimap, centred, `pad` inside its edge. */
export function minimapFrame(
  bounds: Box,
  width: number,
  height: number,
  pad: number,
): MinimapFrame {
  const scale = Math.min(
    (width - 2 * pad) / Math.max(1, bounds.width),
    (height - 2 * pad) / Math.max(1, bounds.height),
  );
  return {
    scale,
    offsetX: (width - bounds.width * scale) / 2,
    offsetY: (height - bounds.height * scale) / 2,
    bounds,
  };
}

/** A graph rectangle in minimap units. */
export function toMinimap(frame: MinimapFrame, box: Box): Box {
  return {
    x: frame.offsetX + (box.x - frame.bounds.x) * frame.scale,
    y: frame.offsetY + (box.y - frame.bounds.y) * frame.scale,
    width: box.width * frame.scale,
    height: box.height * frame.scale,
  };
}

/** The view (same zoom) that centres the screen on the graph point under minimap point (mx, my). */
export function viewForMinimapPoint(
  frame: MinimapFrame,
  mx: number,
  my: number,
  view: View,
  width: number,
  height: number,
): View {
  const gx = frame.bounds.x + (mx - frame.offsetX) / frame.scale;
  const gy = frame.bounds.y + (my - frame.offsetY) / frame.scale;
  return centreOn(gx, gy, view.k, width, height);
}
