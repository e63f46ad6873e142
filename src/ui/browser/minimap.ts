/**
 * The graph's minimap: the whole drawing in a corner, each node a speck coloured by state, and a
 * rectangle showing what the view shows. Clicking or dragging in it moves the view there. The
 * arithmetic is graph-view.ts's; this file draws and listens.
 */
import type { TaskViewState } from '../ui-wire.js';
import { toMinimap, type Box, type MinimapFrame } from './graph-view.js';

/** A node as the minimap draws it, in graph units. */
export interface MinimapItem extends Box {
  readonly state: TaskViewState;
}

/** The minimap's size in CSS pixels, and the blank edge inside it. */
export const MINIMAP_W = 200;
export const MINIMAP_H = 130;
export const MINIMAP_PAD = 6;
const FALLBACK_COLOUR = '#8a94a6';

export class Minimap {
  private readonly canvas: HTMLCanvasElement | null;
  private readonly viewRect: HTMLElement | null;
  private readonly colours = new Map<TaskViewState, string>();

  /** `onMove(mx, my)`: the user points at minimap point (mx, my) (CSS pixels from its top left). */
  constructor(
    private readonly root: HTMLElement,
    private readonly onMove: (mx: number, my: number) => void,
  ) {
    this.canvas = root.querySelector('canvas');
    this.viewRect = root.querySelector('.minimap-view');
    this.listen();
  }

  setVisible(visible: boolean): void {
    this.root.hidden = !visible;
  }

  get visible(): boolean {
    return !this.root.hidden;
  }

  /** Draws the nodes (a canvas: thousands of specks cost one bitmap, not thousands of elements). */
  draw(frame: MinimapFrame, items: readonly MinimapItem[]): void {
    const canvas = this.canvas;
    const context = canvas?.getContext('2d');
    if (canvas == null || context == null) return; // no 2D canvas (a test DOM): the rectangle still shows
    const ratio = window.devicePixelRatio || 1;
    canvas.width = MINIMAP_W * ratio;
    canvas.height = MINIMAP_H * ratio;
    context.setTransform(ratio, 0, 0, ratio, 0, 0);
    context.clearRect(0, 0, MINIMAP_W, MINIMAP_H);
    for (const item of items) {
      const spot = toMinimap(frame, item);
      context.fillStyle = this.colour(item.state);
      context.fillRect(spot.x, spot.y, Math.max(1, spot.width), Math.max(1, spot.height));
    }
  }

  /** Moves the view rectangle to `box` (minimap units), clipped to the minimap. */
  showViewport(box: Box): void {
    if (this.viewRect === null) return;
    const left = Math.max(0, box.x);
    const top = Math.max(0, box.y);
    const right = Math.min(MINIMAP_W, box.x + box.width);
    const bottom = Math.min(MINIMAP_H, box.y + box.height);
    const style = this.viewRect.style;
    style.left = `${left}px`;
    style.top = `${top}px`;
    style.width = `${Math.max(2, right - left)}px`;
    style.height = `${Math.max(2, bottom - top)}px`;
  }

  /** A state's fill, as the stylesheet colours it (`--fill`), read once. */
  private colour(state: TaskViewState): string {
    const known = this.colours.get(state);
    if (known !== undefined) return known;
    const probe = document.createElement('span');
    probe.dataset['state'] = state;
    this.root.appendChild(probe);
    const fill = getComputedStyle(probe).getPropertyValue('--fill').trim();
    probe.remove();
    const colour = fill === '' ? FALLBACK_COLOUR : fill;
    this.colours.set(state, colour);
    return colour;
  }

  private listen(): void {
    let dragging: number | undefined;
    const point = (event: PointerEvent): void => {
      const box = this.root.getBoundingClientRect();
      this.onMove(event.clientX - box.left, event.clientY - box.top);
    };
    this.root.addEventListener('pointerdown', (event) => {
      event.stopPropagation(); // not a pan of the graph below
      dragging = event.pointerId;
      this.root.setPointerCapture(event.pointerId);
      point(event);
    });
    this.root.addEventListener('pointermove', (event) => {
      if (dragging === event.pointerId) point(event);
    });
    const stop = (): void => {
      dragging = undefined;
    };
    this.root.addEventListener('pointerup', stop);
    this.root.addEventListener('pointercancel', stop);
  }
}
