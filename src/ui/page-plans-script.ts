/**
 * `/plans.js`: the plans page's script, plain ES2017 for the browser. Values from ZooKeeper go in
 * with `textContent`, never as markup.
 */

/** Script of the plans page. */
export const PLANS_JS = String.raw`(function () {
  'use strict';
  var parent = document.body.dataset.parent;
  var tbody = document.getElementById('plans');
  var empty = document.getElementById('empty');
  var live = document.getElementById('live');

  function cell(row, text, className) {
    var td = document.createElement('td');
    if (className) td.className = className;
    if (text !== undefined) td.textContent = text;
    row.appendChild(td);
    return td;
  }

  function render(plans) {
    var fragment = document.createDocumentFragment();
    plans.forEach(function (plan) {
      var row = document.createElement('tr');
      row.dataset.plan = plan.plan;
      row.dataset.state = plan.state;
      var link = document.createElement('a');
      link.href = '/plan?path=' + encodeURIComponent(plan.plan);
      link.textContent = plan.name;
      cell(row).appendChild(link);
      var badge = document.createElement('span');
      badge.className = 'badge';
      badge.dataset.state = plan.state;
      badge.textContent = plan.state;
      cell(row).appendChild(badge);
      var progress = cell(row, undefined, 'progress-cell');
      var wrap = document.createElement('div');
      wrap.className = 'progress';
      var bar = document.createElement('div');
      bar.className = 'bar';
      var fill = document.createElement('div');
      fill.style.width = (plan.total > 0 ? Math.round((100 * plan.done) / plan.total) : plan.state === 'completed' ? 100 : 0) + '%';
      bar.appendChild(fill);
      var text = document.createElement('span');
      text.className = 'progress-text';
      text.textContent = plan.historyKept ? plan.done + '/' + plan.total + ' done' : (plan.total - plan.done) + ' left (no history)';
      wrap.appendChild(bar);
      wrap.appendChild(text);
      progress.appendChild(wrap);
      cell(row, String(plan.running), 'num');
      cell(row, String(plan.waiting), 'num');
      cell(row, String(plan.failed), 'num');
      cell(row, String(plan.blocked), 'num');
      fragment.appendChild(row);
    });
    tbody.textContent = '';
    tbody.appendChild(fragment);
    empty.textContent = plans.length === 0 ? 'No plans under ' + parent + ' yet.' : '';
  }

  var source = new EventSource('/api/plans/events');
  source.addEventListener('plans', function (event) { render(JSON.parse(event.data)); });
  source.addEventListener('problem', function (event) { live.textContent = 'ZooKeeper: ' + JSON.parse(event.data).message; });
  source.onopen = function () { live.dataset.live = 'live'; live.textContent = 'live'; };
  source.onerror = function () { live.dataset.live = 'down'; live.textContent = 'reconnecting\u2026'; };
})();
`;
