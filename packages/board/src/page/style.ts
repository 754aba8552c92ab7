/** The board's style sheet: one column on a phone, a table from 800 px up. */
export const STYLE_CSS = String.raw`
:root { --fg: #1d2430; --muted: #5b6575; --line: #d9dee6; --bg: #f6f7f9; --card: #fff; --run: #1f7a3d; --block: #b42318; --pause: #9a6700; --done: #475467; --bad: #7a271a; --wait: #6941c6; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; justify-content: space-between; align-items: center; padding: 10px 16px; background: #101828; color: #fff; }
header a { color: #fff; font-weight: 600; text-decoration: none; }
.live { font-size: 12px; color: #98a2b3; }
.live.on { color: #75e0a7; }
main { padding: 12px 16px; max-width: 1400px; margin: 0 auto; }
.filters { display: flex; flex-wrap: wrap; gap: 8px; margin-bottom: 12px; }
.filters input, .filters select, button { font: inherit; padding: 6px 8px; border: 1px solid var(--line); border-radius: 6px; background: var(--card); }
.filters input { flex: 1 1 220px; }
.chips { display: flex; flex-wrap: wrap; gap: 6px; margin-bottom: 12px; }
.chip { border: 1px solid var(--line); border-radius: 999px; padding: 3px 10px; background: var(--card); cursor: pointer; }
.chip.on { background: #101828; color: #fff; }
h2 { font-size: 15px; margin: 18px 0 6px; }
.state-running { color: var(--run); } .state-waiting { color: var(--wait); } .state-blocked { color: var(--block); } .state-paused { color: var(--pause); } .state-complete { color: var(--done); } .state-unreadable { color: var(--bad); }
table { width: 100%; border-collapse: collapse; background: var(--card); border: 1px solid var(--line); }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: 12px; color: var(--muted); font-weight: 600; }
td.objective { max-width: 420px; overflow-wrap: anywhere; }
.sub { color: var(--muted); font-size: 12px; overflow-wrap: anywhere; }
.bar { position: relative; height: 6px; background: #eaecf0; border-radius: 3px; margin: 2px 0 4px; min-width: 80px; }
.bar > span { position: absolute; left: 0; top: 0; bottom: 0; background: #2e90fa; border-radius: 3px; }
.bar.full > span { background: var(--block); }
.pager { display: flex; gap: 8px; align-items: center; margin: 10px 0; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; margin: 10px 0; }
pre { margin: 4px 0; padding: 6px 8px; background: #f2f4f7; border-radius: 4px; white-space: pre-wrap; overflow-wrap: anywhere; max-height: 320px; overflow: auto; font: 12px/1.4 ui-monospace, monospace; }
.diff .add { background: #dcfae6; display: block; } .diff .del { background: #fee4e2; display: block; }
.tool { border-left: 3px solid var(--line); padding-left: 8px; margin: 6px 0; }
.tool.failed { border-color: var(--block); }
.stop { color: var(--block); }
.controls .buttons { margin: 6px 0; }
.controls button:disabled { opacity: .5; }
.raise { display: flex; flex-wrap: wrap; gap: 8px; align-items: end; margin: 6px 0; }
.raise input { width: 110px; font: inherit; padding: 4px 6px; border: 1px solid var(--line); border-radius: 6px; }
.approval { border-left: 3px solid var(--wait); padding-left: 8px; margin: 8px 0; }
.empty { color: var(--muted); padding: 20px 0; }
@media (max-width: 800px) {
  table, thead, tbody, tr, th, td { display: block; }
  thead { display: none; }
  tr { border-bottom: 1px solid var(--line); padding: 6px 0; }
  td { border: 0; padding: 2px 8px; }
  td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); font-size: 12px; }
}
`
