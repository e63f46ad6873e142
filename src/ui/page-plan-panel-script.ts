/**
 * The second part of `/plan.js` (see `page-plan-script.ts`, which joins the two): the selection and
 * the side panel, pan, zoom and click, and the live event stream. It closes the function the first
 * part opens, so it runs only appended to it.
 */

/** The close of the plan page's function: side panel, pan and zoom, the event stream. */
export const PLAN_PANEL_JS = String.raw`  // ---- selection and the side panel ------------------------------------------------------
  function highlight() {
    nodes.forEach(function (entry) { entry.el.classList.remove('selected', 'related'); });
    edgePaths.forEach(function (path) { path.classList.remove('hot'); });
    if (selected === null || !nodes.has(selected)) return;
    nodes.get(selected).el.classList.add('selected');
    edges.forEach(function (edge) {
      if (edge.target !== selected && edge.source !== selected) return;
      var other = nodes.get(edge.target === selected ? edge.source : edge.target);
      if (other) other.el.classList.add('related');
      var path = edgePaths.get(edge.id);
      if (path) path.classList.add('hot');
    });
  }

  var detailSeq = 0, refreshTimer = null;
  function select(name) {
    selected = name;
    highlight();
    loadDetail();
  }
  function refreshSelected() {
    if (selected === null) return;
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(loadDetail, 100);
  }
  function loadDetail() {
    if (selected === null) return;
    var seq = ++detailSeq;
    var name = selected;
    fetch('/api/task?path=' + encodeURIComponent(plan + '/' + name)).then(function (response) {
      return response.json().then(function (body) { return { ok: response.ok, body: body }; });
    }).then(function (answer) {
      if (seq !== detailSeq) return;
      if (!answer.ok) { renderProblem(name, answer.body.error ? answer.body.error.message : 'request failed'); return; }
      renderDetail(answer.body);
    }, function (error) {
      if (seq === detailSeq) renderProblem(name, String(error));
    });
  }

  function h(tag, text, className) {
    var element = document.createElement(tag);
    if (text !== undefined && text !== null) element.textContent = String(text);
    if (className) element.className = className;
    return element;
  }
  function row(list, label, value) {
    if (value === undefined || value === null || value === '') return;
    list.appendChild(h('dt', label));
    var dd = document.createElement('dd');
    if (value instanceof Node) dd.appendChild(value); else dd.textContent = String(value);
    list.appendChild(dd);
  }
  function when(iso) {
    if (!iso) return undefined;
    var date = new Date(iso);
    return isNaN(date.getTime()) ? iso : date.toLocaleString();
  }

  function renderProblem(name, message) {
    panel.textContent = '';
    panel.appendChild(h('h2', G.shortLabel(name)));
    panel.appendChild(h('p', message, 'hint'));
  }

  function renderDetail(detail) {
    panel.textContent = '';
    panel.dataset.task = detail.task;
    var title = h('h2', G.shortLabel(detail.name));
    title.appendChild(h('small', detail.name));
    panel.appendChild(title);
    var pill = h('span', detail.state + (detail.gone ? ' (no record kept)' : ''), 'pill');
    pill.dataset.state = detail.state;
    pill.id = 'detail-state';
    panel.appendChild(pill);

    var list = document.createElement('dl');
    row(list, 'Path', h('code', detail.task));
    if (!detail.gone) {
      row(list, 'Function', h('code', detail.fn, 'fn'));
      var inputs = document.createElement('ul');
      inputs.className = 'inputs';
      detail.inputs.forEach(function (input) {
        var item = document.createElement('li');
        var name = input.slice(input.lastIndexOf('/') + 1);
        var link = h('a', G.shortLabel(name) + ' ' + name);
        link.href = '#';
        link.addEventListener('click', function (event) { event.preventDefault(); select(name); });
        item.appendChild(link);
        inputs.appendChild(item);
      });
      row(list, 'Inputs', detail.inputs.length ? inputs : 'none');
      if (detail.pendingInputs > 0) row(list, 'Waiting for', detail.pendingInputs + ' input(s)');
      row(list, 'Keeps result', detail.keepResult ? 'yes' : 'no');
      if (detail.owner) row(list, 'Running on', detail.owner.workerId + ' since ' + when(detail.owner.claimedAt));
      if (detail.attempts && !detail.failure) {
        row(list, 'Attempts', detail.attempts.failures + ' failed; next try ' + when(detail.attempts.nextTryAt));
        row(list, 'Last error', detail.attempts.lastError);
      }
      row(list, 'Started', when(detail.startedAt));
      row(list, 'Finished', when(detail.finishedAt));
      if (detail.durationMs !== undefined) row(list, 'Duration', detail.durationMs + ' ms');
      row(list, 'Worker', detail.workerId);
      if (detail.blockedReason) row(list, 'Blocked', detail.blockedReason);
    } else {
      row(list, 'Note', 'The task finished and its node is gone; this plan keeps no history (createPlan with { history: true }).');
    }
    panel.appendChild(list);

    if (!detail.gone) {
      panel.appendChild(h('h3', 'Params'));
      panel.appendChild(h('pre', detail.params, 'params'));
    }
    if (detail.failure) {
      var section = h('section', undefined, 'error');
      section.id = 'detail-error';
      section.appendChild(h('h3', 'Error'));
      var head = h('div');
      head.appendChild(h('code', detail.failure.code, 'code'));
      head.appendChild(document.createTextNode(' ' + detail.failure.type));
      section.appendChild(head);
      section.appendChild(h('div', detail.failure.message, 'message'));
      var facts = document.createElement('dl');
      row(facts, 'Attempts', detail.failure.attempts);
      row(facts, 'Retryable', detail.failure.retryable ? 'yes' : 'no');
      row(facts, 'Worker', detail.failure.workerId);
      row(facts, 'At', when(detail.failure.at));
      section.appendChild(facts);
      if (detail.failure.stack) {
        section.appendChild(h('h3', 'Stack (excerpt)'));
        section.appendChild(h('pre', detail.failure.stack, 'stack'));
      }
      panel.appendChild(section);
    }
    if (detail.result) {
      var result = h('section', undefined, 'result');
      result.id = 'detail-result';
      result.appendChild(h('h3', 'Result'));
      if (detail.result.value !== undefined) result.appendChild(h('pre', detail.result.value, 'value'));
      else result.appendChild(h('p', detail.result.unavailable, 'hint'));
      panel.appendChild(result);
    }
  }

  // ---- pan, zoom, click --------------------------------------------------------------------
  var drag = null;
  svg.addEventListener('pointerdown', function (event) {
    drag = { x: event.clientX, y: event.clientY, vx: view.x, vy: view.y, moved: false, id: event.pointerId };
  });
  svg.addEventListener('pointermove', function (event) {
    if (!drag) return;
    var dx = event.clientX - drag.x, dy = event.clientY - drag.y;
    if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
    if (!drag.moved) { drag.moved = true; svg.setPointerCapture(drag.id); svg.classList.add('panning'); }
    userMoved = true;
    view.x = drag.vx + dx;
    view.y = drag.vy + dy;
    applyTransform();
  });
  function endDrag() { if (drag && drag.moved) { suppressClick = true; setTimeout(function () { suppressClick = false; }, 0); } drag = null; svg.classList.remove('panning'); }
  var suppressClick = false;
  svg.addEventListener('pointerup', endDrag);
  svg.addEventListener('pointercancel', endDrag);
  svg.addEventListener('wheel', function (event) {
    event.preventDefault();
    var box = svg.getBoundingClientRect();
    var px = event.clientX - box.left, py = event.clientY - box.top;
    userMoved = true;
    var k = Math.min(4, Math.max(0.02, view.k * Math.exp(-event.deltaY * 0.0015)));
    view.x = px - (px - view.x) * (k / view.k);
    view.y = py - (py - view.y) * (k / view.k);
    view.k = k;
    applyTransform();
  }, { passive: false });
  nodesLayer.addEventListener('click', function (event) {
    if (suppressClick) return;
    var target = event.target.closest ? event.target.closest('g.node') : null;
    if (target) select(target.getAttribute('data-task'));
  });
  function zoomBy(factor) {
    var box = svg.getBoundingClientRect();
    userMoved = true;
    var px = box.width / 2, py = box.height / 2, k = Math.min(4, Math.max(0.02, view.k * factor));
    view.x = px - (px - view.x) * (k / view.k);
    view.y = py - (py - view.y) * (k / view.k);
    view.k = k;
    applyTransform();
  }
  document.getElementById('fit').addEventListener('click', fit);
  document.getElementById('zoom-in').addEventListener('click', function () { zoomBy(1.25); });
  document.getElementById('zoom-out').addEventListener('click', function () { zoomBy(0.8); });

  // ---- the live stream -----------------------------------------------------------------------
  startWorker();
  var source = new EventSource('/api/events?path=' + encodeURIComponent(plan));
  source.addEventListener('snapshot', function (event) { notice.textContent = ''; onSnapshot(JSON.parse(event.data)); });
  source.addEventListener('diff', function (event) { notice.textContent = ''; onDiff(JSON.parse(event.data)); });
  source.addEventListener('problem', function (event) { notice.textContent = 'ZooKeeper: ' + JSON.parse(event.data).message; });
  source.addEventListener('gone', function () {
    source.close();
    var badge = document.getElementById('plan-state');
    badge.textContent = 'deleted';
    badge.dataset.state = 'gone';
    notice.textContent = 'This plan no longer exists.';
    live.dataset.live = 'down';
    live.textContent = 'plan deleted';
  });
  source.onopen = function () { live.dataset.live = 'live'; live.textContent = 'live'; };
  source.onerror = function () { live.dataset.live = 'down'; live.textContent = 'reconnecting\u2026'; };
})();
`;
