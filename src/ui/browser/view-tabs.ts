/**
 * The plan page's views (graph, task list, timeline) and the tabs that switch between them. The
 * view shown is in the address (`?view=list`), so a link opens it; the graph, the default, has no
 * parameter. The task side panel stays beside whichever view is shown.
 */

export const PLAN_VIEWS = ['graph', 'list', 'timeline'] as const;

export type PlanView = (typeof PLAN_VIEWS)[number];

/** The view a page address asks for (`?view=`); the graph when it names none or an unknown one. */
export function viewOfUrl(search: string): PlanView {
  const asked = new URLSearchParams(search).get('view');
  return PLAN_VIEWS.find((view) => view === asked) ?? 'graph';
}

/** A page address (path, query and fragment) with one query parameter set, or removed when `value` is undefined. */
export function withQueryParam(href: string, name: string, value: string | undefined): string {
  const url = new URL(href);
  if (value === undefined) url.searchParams.delete(name);
  else url.searchParams.set(name, value);
  return `${url.pathname}${url.search}${url.hash}`;
}

/**
 * Switches the page between its views: the tab of each is a `[data-view]` button in `nav`, its
 * content the section of the same name in `sections`. `onShow` hears each view shown, the first
 * (from the address) included.
 */
export class ViewTabs {
  private shown: PlanView;

  constructor(
    private readonly nav: HTMLElement,
    private readonly sections: Readonly<Record<PlanView, HTMLElement>>,
    private readonly onShow: (view: PlanView) => void,
  ) {
    this.shown = viewOfUrl(location.search);
    nav.addEventListener('click', (event) => {
      const tab = event.target instanceof Element ? event.target.closest('[data-view]') : null;
      const view = PLAN_VIEWS.find(
        (candidate) => tab instanceof HTMLElement && candidate === tab.dataset['view'],
      );
      if (view !== undefined) this.show(view);
    });
    nav.addEventListener('keydown', (event) => {
      const step = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0;
      if (step === 0) return;
      const at = PLAN_VIEWS.indexOf(this.shown);
      const next = PLAN_VIEWS[(at + step + PLAN_VIEWS.length) % PLAN_VIEWS.length] as PlanView;
      this.show(next);
      nav.querySelector<HTMLElement>(`[data-view="${next}"]`)?.focus();
    });
    this.draw();
    onShow(this.shown);
  }

  /** The view shown. */
  get current(): PlanView {
    return this.shown;
  }

  /** Shows a view and writes it into the address (replacing the entry: the tabs add no history). */
  show(view: PlanView): void {
    if (view === this.shown) return;
    this.shown = view;
    history.replaceState(
      history.state,
      '',
      withQueryParam(location.href, 'view', view === 'graph' ? undefined : view),
    );
    this.draw();
    this.onShow(view);
  }

  private draw(): void {
    document.body.dataset['view'] = this.shown; // the stylesheet hides what the view does not use
    for (const view of PLAN_VIEWS) {
      const selected = view === this.shown;
      this.sections[view].hidden = !selected;
      const tab = this.nav.querySelector(`[data-view="${view}"]`);
      tab?.setAttribute('aria-selected', String(selected));
      tab?.setAttribute('tabindex', selected ? '0' : '-1');
    }
  }
}
