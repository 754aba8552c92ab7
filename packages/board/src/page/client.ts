/**
 * The board's script, served as /board.js. It builds every node with textContent and a fixed set of
 * attributes, never from markup, so nothing a model or a tool wrote can become an element, a link or a
 * handler; links are only the board's own paths. Plain DOM, no framework: two views and one event stream.
 */
export const CLIENT_JS = String.raw`(function () {
  'use strict'
  var STATES = ['running', 'waiting', 'blocked', 'paused', 'complete', 'unreadable']
  var LABELS = { running: 'Running', waiting: 'Waiting for approval', blocked: 'Blocked', paused: 'Paused', complete: 'Complete', unreadable: 'Unreadable' }
  var main = document.getElementById('main')
  var live = document.getElementById('live')

  function el(tag, props, children) {
    var node = document.createElement(tag)
    if (props) for (var key in props) {
      var value = props[key]
      if (value === undefined || value === null) continue
      if (key === 'text') node.textContent = String(value)
      else if (key === 'className') node.className = value
      else if (key === 'href') node.setAttribute('href', value)
      else if (key === 'onclick' || key === 'oninput' || key === 'onchange' || key === 'onsubmit') node.addEventListener(key.slice(2), value)
      else node.setAttribute(key, String(value))
    }
    if (children) for (var i = 0; i < children.length; i++) if (children[i]) node.appendChild(typeof children[i] === 'string' ? document.createTextNode(children[i]) : children[i])
    return node
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild) }
  function tokens(n) { return n >= 1e6 ? (n / 1e6).toFixed(1) + 'M' : n >= 1e3 ? (n / 1e3).toFixed(1) + 'k' : String(n) }
  function usd(n) { return n === null || n === undefined ? 'unknown' : '$' + n.toFixed(n < 1 ? 4 : 2) }
  function duration(ms) { var s = Math.round(ms / 1000); return s < 60 ? s + 's' : s < 3600 ? Math.floor(s / 60) + 'm' + (s % 60) + 's' : Math.floor(s / 3600) + 'h' + Math.floor((s % 3600) / 60) + 'm' }
  function ago(ms) { var s = Math.max(0, Math.round((Date.now() - ms) / 1000)); return s < 60 ? s + 's ago' : s < 3600 ? Math.floor(s / 60) + 'm ago' : s < 86400 ? Math.floor(s / 3600) + 'h ago' : Math.floor(s / 86400) + 'd ago' }
  function bar(value, limit) {
    var share = limit ? Math.min(1, value / limit) : 0
    var inner = el('span')
    inner.style.width = Math.round(share * 100) + '%'
    return el('div', { className: 'bar' + (limit && value >= limit ? ' full' : ''), role: 'img', 'aria-label': limit ? Math.round(share * 100) + '% of the budget' : 'no budget' }, [inner])
  }
  function spendCells(spent, budgets) {
    spent = spent || { tokens: 0, costUsd: 0, activeTimeMs: 0 }
    budgets = budgets || {}
    var parts = []
    parts.push(el('div', { className: 'sub', text: 'tokens ' + tokens(spent.tokens) + (budgets.tokens ? ' / ' + tokens(budgets.tokens) : '') }))
    if (budgets.tokens) parts.push(bar(spent.tokens, budgets.tokens))
    parts.push(el('div', { className: 'sub', text: 'cost ' + usd(spent.costUsd) + (budgets.costUsd ? ' / ' + usd(budgets.costUsd) : '') }))
    if (budgets.costUsd) parts.push(bar(spent.costUsd || 0, budgets.costUsd))
    parts.push(el('div', { className: 'sub', text: 'time ' + duration(spent.activeTimeMs) + (budgets.activeTimeMs ? ' / ' + duration(budgets.activeTimeMs) : '') }))
    if (budgets.activeTimeMs) parts.push(bar(spent.activeTimeMs, budgets.activeTimeMs))
    return parts
  }
  function getJson(url) {
    return fetch(url, { credentials: 'same-origin', headers: { accept: 'application/json' } }).then(function (response) {
      if (!response.ok) return response.text().then(function (text) { throw new Error(text || response.statusText) })
      return response.json()
    })
  }
  function failed(error) { clear(main); main.appendChild(el('p', { className: 'empty', text: 'The board could not load: ' + error.message })) }

  // Overview ----------------------------------------------------------------------------------------------
  var query = new URLSearchParams(location.search)
  function overviewUrl() {
    var params = new URLSearchParams()
    ;['state', 'text', 'sort', 'offset'].forEach(function (key) { if (query.get(key)) params.set(key, query.get(key)) })
    return params
  }
  function setQuery(changes) {
    for (var key in changes) { if (changes[key]) query.set(key, changes[key]); else query.delete(key) }
    if (!('offset' in changes)) query.delete('offset')
    var search = overviewUrl().toString()
    history.replaceState(null, '', '/' + (search ? '?' + search : ''))
    refresh()
  }
  var typing
  function filters(page) {
    // A page of the most recent sessions only (the whole listing is on its way): counts of those read so far.
    var more = page.partial ? '+' : ''
    var text = el('input', { type: 'search', placeholder: 'filter: objective, project, worker, session', value: query.get('text') || '', 'aria-label': 'filter', id: 'filter' })
    text.addEventListener('input', function () { clearTimeout(typing); typing = setTimeout(function () { setQuery({ text: text.value.trim() }) }, 250) })
    var sort = el('select', { 'aria-label': 'sort', id: 'sort' }, [['updated', 'last activity'], ['round', 'rounds'], ['tokens', 'tokens spent'], ['objective', 'objective']].map(function (option) {
      return el('option', { value: option[0], text: 'sort: ' + option[1] })
    }))
    sort.value = query.get('sort') || 'updated'
    sort.addEventListener('change', function () { setQuery({ sort: sort.value === 'updated' ? '' : sort.value }) })
    var chips = el('div', { className: 'chips' }, [el('button', { className: 'chip' + (query.get('state') ? '' : ' on'), text: 'all', onclick: function () { setQuery({ state: '' }) } })].concat(STATES.map(function (state) {
      return el('button', { className: 'chip state-' + state + (query.get('state') === state ? ' on' : ''), 'data-state': state, text: LABELS[state] + ' ' + page.counts[state] + more, onclick: function () { setQuery({ state: state }) } })
    })))
    return [el('div', { className: 'filters' }, [text, sort]), chips]
  }
  function row(goal) {
    var verdict = goal.verdict ? el('div', { className: 'sub', text: goal.verdict }) : null
    return el('tr', { 'data-session': goal.session, className: 'goal-row' }, [
      el('td', { className: 'objective', 'data-label': 'goal' }, [el('a', { href: '/goal/' + encodeURIComponent(goal.session), text: goal.objective || goal.session }), el('div', { className: 'sub', text: goal.session })]),
      el('td', { 'data-label': 'project' }, [el('span', { className: 'sub', text: goal.project }), goal.worker ? el('div', { className: 'sub', text: 'worker ' + goal.worker }) : null]),
      el('td', { 'data-label': 'rounds', className: 'rounds' }, [el('span', { className: 'round', text: goal.round + '/' + goal.maxRounds }), bar(goal.round, goal.maxRounds)]),
      el('td', { 'data-label': 'spend', className: 'spend' }, spendCells(goal.spent, goal.budgets)),
      el('td', { 'data-label': 'last activity' }, [el('span', { text: ago(goal.updatedAt), title: new Date(goal.updatedAt).toISOString() }), verdict]),
    ])
  }
  function overview() {
    return getJson('/api/overview?' + overviewUrl().toString()).then(function (page) {
      var focused = document.activeElement && document.activeElement.id
      clear(main)
      filters(page).forEach(function (node) { main.appendChild(node) })
      if (!page.rows.length) main.appendChild(el('p', { className: 'empty', text: page.total ? 'Nothing on this page.' : 'No goals match.' }))
      var groups = {}
      page.rows.forEach(function (goal) { (groups[goal.state] = groups[goal.state] || []).push(goal) })
      STATES.forEach(function (state) {
        if (!groups[state]) return
        main.appendChild(el('h2', { className: 'state-' + state, text: LABELS[state] + ' (' + page.counts[state] + (page.partial ? '+' : '') + ')' }))
        main.appendChild(el('table', { className: 'goals', 'data-group': state }, [
          el('thead', null, [el('tr', null, ['goal', 'project', 'rounds', 'spend', 'last activity'].map(function (name) { return el('th', { text: name }) }))]),
          el('tbody', null, groups[state].map(row)),
        ]))
      })
      var offset = page.offset, shown = page.rows.length
      if (page.total > shown) main.appendChild(el('div', { className: 'pager' }, [
        el('button', { text: 'previous', disabled: offset > 0 ? null : 'disabled', onclick: function () { setQuery({ offset: String(Math.max(0, offset - page.limit)) }) } }),
        el('span', { className: 'sub', text: (offset + 1) + '–' + (offset + shown) + ' of ' + page.total + (page.partial ? '+' : '') }),
        el('button', { text: 'next', disabled: offset + shown < page.total ? null : 'disabled', onclick: function () { setQuery({ offset: String(offset + page.limit) }) } }),
      ]))
      if (focused) { var again = document.getElementById(focused); if (again) { again.focus(); if (again.setSelectionRange && again.value) again.setSelectionRange(again.value.length, again.value.length) } }
      document.body.setAttribute('data-ready', 'overview')
    }, failed)
  }

  // One goal ----------------------------------------------------------------------------------------------
  function pre(text, className) { return el('pre', { className: className, text: text }) }
  function diffNode(diff) {
    return el('div', { className: 'diff' }, [el('div', { className: 'sub', text: 'diff ' + diff.path }), el('pre', null, diff.lines.map(function (line) {
      return el('span', { className: line[0] === '+' ? 'add' : line[0] === '-' ? 'del' : '', text: line[0] + ' ' + line[1] })
    }))])
  }
  function list(title, items) {
    return items.length ? el('div', null, [el('div', { className: 'sub', text: title }), el('ul', null, items.map(function (item) { return el('li', { text: item }) }))]) : null
  }
  function judgementNode(judged) {
    return el('div', { className: 'tool judgement' + (judged.accepted ? '' : ' failed') }, [
      el('strong', { text: 'judge ' + judged.judge + ': ' + judged.verdict + ', completion ' + (judged.accepted ? 'accepted' : 'refused') }),
      list('reasons', judged.reasons),
      list('missing', judged.missing),
      judged.diff ? el('div', { className: 'sub', text: 'workspace change judged (sha256 ' + judged.diff.sha256 + ')' }) : el('div', { className: 'sub', text: 'no diff (not a git work tree)' }),
      judged.diff ? pre(judged.diff.summary) : null,
    ])
  }
  // What the goal stands on: the status in the goal package's words, then the check and the judge's last word.
  function evidenceCard(view) {
    var goal = view.goal
    var parts = [el('h3', { text: 'Evidence' }), el('div', { className: 'evidence-status', text: view.status })]
    if (goal.until) parts.push(el('div', { className: 'sub', text: 'done when: ' + goal.until }))
    if (goal.verify) parts.push(el('div', { className: 'sub', text: 'check: ' + goal.verify.join(' && ') + (goal.verification ? ' · last run ' + (goal.verification.last.ok ? 'passed' : 'failed (exit ' + goal.verification.last.exitCode + ')') + ', ' + goal.verification.attempts + ' run(s)' : ' · not run yet') }))
    if (goal.judgement) parts.push(judgementNode(goal.judgement.last))
    return el('section', { className: 'card evidence' }, parts)
  }
  function roundCard(round) {
    var title = round.round ? 'Round ' + round.round : 'Turn ' + round.turn + ' (a person)'
    var usage = round.usage.calls ? 'tokens ' + tokens(round.usage.tokens) + ', cost ' + usd(round.usage.costUsd) + ', time ' + duration(round.usage.activeTimeMs) : 'no metered model call'
    var parts = [el('h3', { text: title }), el('div', { className: 'sub', text: new Date(round.startedAt).toISOString() + ' · ' + usage + (round.outcome ? ' · ' + round.outcome : '') })]
    round.compactions.forEach(function (c) { parts.push(el('div', { className: 'sub', text: 'context compacted (' + c.reason + ', ' + c.method + ')' })) })
    round.tools.forEach(function (tool) {
      var items = [el('div', null, [el('strong', { text: tool.name }), ' ', el('span', { className: 'sub', text: tool.deniedBy ? 'denied by ' + tool.deniedBy : tool.ok === undefined ? 'no result' : tool.ok ? 'ok' : 'failed' })])]
      items.push(tool.diff ? diffNode(tool.diff) : pre(tool.arguments))
      if (tool.result !== undefined) items.push(pre(tool.result, 'result'))
      parts.push(el('div', { className: 'tool' + (tool.ok === false ? ' failed' : '') }, items))
    })
    round.checks.forEach(function (check) {
      parts.push(el('div', { className: 'tool' + (check.ok ? '' : ' failed') }, [el('strong', { text: 'check ' + (check.ok ? 'passed' : 'failed (exit ' + check.exitCode + ')') + ': ' + check.command }), pre(check.output)]))
    })
    round.judgements.forEach(function (judged) { parts.push(judgementNode(judged)) })
    round.stops.forEach(function (stop) { parts.push(el('div', { className: 'stop', text: stop })) })
    if (round.text) parts.push(pre(round.text, 'model-text'))
    return el('section', { className: 'card round', 'data-round': round.round }, parts)
  }
  // Controls: sent to the process that runs the goal, through the board (POST, JSON, same origin only).
  var controlMessage = null
  function control(id, body) {
    controlMessage = { text: 'sending ' + body.action + '…', failed: false }
    return fetch('/api/goal/' + encodeURIComponent(id) + '/control', { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(body) }).then(function (response) {
      return response.json().then(function (reply) {
        controlMessage = reply.ok ? { text: body.action + ': done', failed: false } : { text: body.action + ' refused: ' + reply.message, failed: true }
      })
    }, function (error) { controlMessage = { text: body.action + ' failed: ' + error.message, failed: true } }).then(refresh)
  }
  function number(input, scale) { var value = Number(input.value); return input.value.trim() && value > 0 ? value * scale : undefined }
  function raiseForm(id, goal, enabled) {
    var budgets = (goal && goal.budgets) || {}
    var fields = [['tokens', 'tokens', 1, budgets.tokens], ['costUsd', 'cost (USD)', 1, budgets.costUsd], ['activeTimeMs', 'time (minutes)', 60000, budgets.activeTimeMs && budgets.activeTimeMs / 60000], ['maxRounds', 'max rounds', 1, goal && goal.maxGoalRounds]]
    var inputs = {}
    var labels = fields.map(function (field) {
      inputs[field[0]] = el('input', { type: 'number', min: '0', step: 'any', name: field[0], id: 'raise-' + field[0], placeholder: field[3] === undefined ? 'none' : String(field[3]), disabled: enabled ? null : 'disabled' })
      return el('label', { className: 'sub' }, [field[1] + ' ', inputs[field[0]]])
    })
    var form = el('form', { className: 'raise', id: 'raise', onsubmit: function (event) {
      event.preventDefault()
      var body = { action: 'raise', revision: goal.revision, budgets: {} }
      fields.forEach(function (field) {
        var value = number(inputs[field[0]], field[2])
        if (value === undefined) return
        if (field[0] === 'maxRounds') body.maxRounds = Math.round(value)
        else body.budgets[field[0]] = field[0] === 'costUsd' ? value : Math.round(value)
      })
      if (!Object.keys(body.budgets).length) delete body.budgets
      control(id, body)
    } }, labels.concat([el('button', { type: 'submit', 'data-control': 'raise', text: 'raise', disabled: enabled ? null : 'disabled' })]))
    return form
  }
  function approvalNode(id, approval) {
    return el('div', { className: 'approval', 'data-call': approval.callId }, [
      el('div', null, [el('strong', { text: approval.tool }), ' ', el('span', { className: 'sub', text: approval.why })]),
      pre(approval.command !== undefined ? approval.command : approval.arguments),
      el('button', { 'data-control': 'allow', text: 'allow once', onclick: function () { control(id, { action: 'answer', callId: approval.callId, allow: true }) } }),
      ' ',
      el('button', { 'data-control': 'deny', text: 'deny', onclick: function () { control(id, { action: 'answer', callId: approval.callId, allow: false }) } }),
    ])
  }
  function controlsCard(id, state) {
    var live = state.live, status = live ? state.status : null, goal = status && status.goal
    var parts = [el('h3', { text: 'Controls' })]
    if (!live) parts.push(el('p', { className: 'sub', id: 'control-why', text: 'Controls are off: ' + state.why }))
    else if (status.fleetJob) parts.push(el('p', { className: 'sub', text: 'fleet job ' + status.fleetJob.id + (status.fleetJob.state === 'paused' ? ' is paused; resume puts it back in the queue' : ' is queued again') }))
    else parts.push(el('p', { className: 'sub', text: (status.worker ? 'run by fleet worker ' + status.worker + ' (process ' + status.pid + ')' : 'run by process ' + status.pid) + (status.answersApprovals ? '; it takes approvals from this page' : '') }))
    function button(action, enabled, extra) {
      return el('button', { 'data-control': action, text: action, disabled: enabled ? null : 'disabled', onclick: function () { control(id, Object.assign({ action: action }, goal ? { revision: goal.revision } : {}, extra)) } })
    }
    var pausedJob = !!status && !!status.fleetJob && status.fleetJob.state === 'paused'
    parts.push(el('div', { className: 'buttons' }, [
      button('pause', !!goal && goal.phase === 'active'), ' ',
      button('resume', pausedJob || (!!goal && (goal.phase === 'paused' || goal.phase === 'blocked'))), ' ',
      button('clear', !!goal),
    ]))
    parts.push(raiseForm(id, goal, !!goal))
    if (status) status.approvals.forEach(function (approval) { parts.push(approvalNode(id, approval)) })
    if (controlMessage) parts.push(el('p', { id: 'control-message', role: 'status', className: controlMessage.failed ? 'stop' : 'sub', text: controlMessage.text }))
    return el('section', { className: 'card controls', id: 'controls' }, parts)
  }

  function goalPage(id) {
    return getJson('/api/goal/' + encodeURIComponent(id)).then(function (data) {
      var view = data.view, goal = view.goal
      clear(main)
      main.appendChild(el('p', null, [el('a', { href: '/', text: '← all goals' })]))
      main.appendChild(el('h1', { className: 'objective', text: goal ? goal.objective : 'session ' + view.session }))
      if (goal) {
        var state = goal.phase === 'active' ? 'running' : goal.phase
        main.appendChild(el('div', { className: 'card summary' }, [
          el('div', null, [el('strong', { className: 'state-' + state, text: LABELS[state] || state }), ' · round ', el('span', { className: 'round', text: goal.roundsStarted + '/' + goal.maxGoalRounds })]),
          bar(goal.roundsStarted, goal.maxGoalRounds),
          goal.blockedReason ? el('div', { className: 'stop', text: goal.blockedReason.code + ': ' + goal.blockedReason.message }) : null,
        ].concat(spendCells(goal.spent, goal.budgets)).concat([el('div', { className: 'sub', text: 'session ' + view.session + ' · ' + view.cwd })])))
      }
      main.appendChild(controlsCard(id, data.control))
      if (goal) main.appendChild(evidenceCard(view))
      if (view.answer) main.appendChild(el('section', { className: 'card' }, [el('h3', { text: 'Final answer' }), pre(view.answer, 'answer')]))
      main.appendChild(el('section', { className: 'card' }, [el('h3', { text: 'Resume from a terminal' })].concat(data.resume.map(function (command) { return pre(command, 'command') }))))
      if (view.heldFrom) main.appendChild(el('p', { className: 'sub', text: 'The process writing this session holds its log from record ' + view.heldFrom + ' (its last checkpoint): the rounds before are not shown here; goalkeeper show ' + view.session + ' prints them. The goal and its spend count them all.' }))
      view.rounds.slice().reverse().forEach(function (round) { main.appendChild(roundCard(round)) })
      document.body.setAttribute('data-ready', 'goal')
    }, failed)
  }

  // Routing and live updates ------------------------------------------------------------------------------
  var goalMatch = /^\/goal\/([^/]+)$/.exec(location.pathname)
  function refresh() { return goalMatch ? goalPage(decodeURIComponent(goalMatch[1])) : overview() }
  var pending = null, last = 0
  // A burst of changes (a round writes many records) costs one reload a second at most.
  function changed() {
    if (pending) return
    var wait = Math.max(0, 1000 - (Date.now() - last))
    pending = setTimeout(function () { pending = null; last = Date.now(); refresh() }, wait)
  }
  var events = new EventSource('/api/events')
  events.addEventListener('open', function () { live.textContent = 'live'; live.className = 'live on' })
  events.addEventListener('error', function () { live.textContent = 'reconnecting…'; live.className = 'live' })
  events.addEventListener('change', changed)
  refresh()
})()
`
