"""Interactive Gantt charts as one self-contained HTML file, drawn with plotly.

One horizontal bar per operation, one trace per job: the legend lists the jobs (click one to hide it,
double-click to show it alone) and a drop-down shows a single job or all of them. Hovering a bar shows job,
step, machine, start, end and duration and, in the before/after form, the operation's start and end before the
repair and whether it moved or takes longer. Moved operations are outlined in red, lengthened ones hatched in
orange; every disruption's downtime is shaded, and reveal times and makespans are lines named in the legend.
The plotly library is embedded (the file opens offline).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from alas_argo.jssp.disruption import Disruption
from alas_argo.jssp.gantt_style import (
    DOWNTIME_COLOR,
    LENGTHENED_COLOR,
    MAKESPAN_COLOR,
    MOVED_COLOR,
    REVEAL_COLOR,
    Changes,
    changes,
    downtimes,
    job_hex,
)
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Schedule

__all__ = ["gantt_html", "gantt_plotly"]

_HOVER = ("<b>job %{customdata[0]}, step %{customdata[1]}</b><br>machine M%{customdata[2]}<br>"
          "start %{customdata[3]}, end %{customdata[4]} (duration %{customdata[5]})%{customdata[6]}<extra></extra>")


def _bars(go: Any, instance: Instance, schedule: Schedule, *, before: Schedule | None, marks: Changes | None,
          row: int, legend: bool) -> list[tuple[Any, int]]:
    was = before.by_key() if before is not None else {}
    traces = []
    for job in sorted({o.job for o in schedule.operations}):
        ops = [o for o in schedule.operations if o.job == job]
        extra = []
        for o in ops:
            parts = []
            if marks is not None:
                old = was.get(o.key)
                parts.append(f"<br>before: start {old.start}, end {old.end}" if old is not None else "<br>before: -")
                if o.key in marks.moved:
                    parts.append("<br><b>moved</b>")
                if o.key in marks.lengthened:
                    parts.append(f"<br><b>takes longer</b> (nominal {instance.duration(o.job, o.step)})")
            extra.append("".join(parts))
        moved = [marks is not None and o.key in marks.moved for o in ops]
        longer = [marks is not None and o.key in marks.lengthened for o in ops]
        traces.append((go.Bar(
            orientation="h", base=[o.start for o in ops], x=[o.end - o.start for o in ops],
            y=[f"M{o.machine}" for o in ops], name=f"job {job}", legendgroup=f"job {job}", showlegend=legend,
            marker={"color": job_hex(job),
                    "line": {"color": [MOVED_COLOR if m else LENGTHENED_COLOR if lg else "#333333"
                                       for m, lg in zip(moved, longer, strict=True)],
                             "width": [2.5 if m else 1.5 if lg else 0.5 for m, lg in zip(moved, longer, strict=True)]},
                    "pattern": {"shape": ["/" if lg else "" for lg in longer], "fgcolor": LENGTHENED_COLOR}},
            customdata=[[o.job, o.step, o.machine, o.start, o.end, o.end - o.start, x]
                        for o, x in zip(ops, extra, strict=True)],
            hovertemplate=_HOVER, text=[str(job)] * len(ops), textposition="inside", insidetextanchor="middle"),
            row))
    return traces


def gantt_plotly(instance: Instance, schedule: Schedule, *, before: Schedule | None = None,
                 disruptions: Sequence[Disruption] = (), title: str | None = None) -> Any:
    """The plotly figure (``plotly.graph_objects.Figure``) of :func:`gantt_html`."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    rows = 2 if before is not None else 1
    marks = changes(instance, schedule, before) if before is not None else None
    titles = (["before", f"after: {len(marks.moved)} moved, {len(marks.lengthened)} take longer"]
              if marks is not None else ["plan"])
    fig = make_subplots(rows=rows, cols=1, shared_xaxes=True, subplot_titles=titles, vertical_spacing=0.08)
    traces: list[tuple[Any, int]] = []
    if before is not None:
        traces += _bars(go, instance, before, before=None, marks=None, row=1, legend=False)
    traces += _bars(go, instance, schedule, before=before, marks=marks, row=rows, legend=True)
    plans = [p for p in (before, schedule) if p is not None]
    x_max = max(1, *(p.makespan for p in plans), *(b.end for b in downtimes(disruptions)))
    machines = [f"M{m}" for m in range(instance.num_machines)]
    for row in range(1, rows + 1):
        for b in downtimes(disruptions):
            # The machine axis is categorical: a shape's y is a place in categoryarray (M0 last), not a machine.
            at = instance.num_machines - 1 - b.machine
            fig.add_shape(type="rect", x0=b.start, x1=b.end, y0=at - 0.5, y1=at + 0.5,
                          fillcolor=DOWNTIME_COLOR, opacity=0.35, line={"width": 0}, row=row, col=1)
        fig.update_yaxes(categoryorder="array", categoryarray=machines[::-1], row=row, col=1)
    # Lines as traces (shapes cannot be in a legend): reveal times and makespans, each toggled from the legend.
    height = [machines[0], machines[-1]]
    for k, d in enumerate(disruptions):
        for row in range(1, rows + 1):
            traces.append((go.Scatter(x=[d.time, d.time], y=height, mode="lines", name=f"reveal time {d.time}",
                                      legendgroup=f"reveal {k}", showlegend=row == rows,
                                      line={"color": REVEAL_COLOR, "dash": "dash"}, hoverinfo="name"), row))
    for row, plan in zip(range(1, rows + 1), plans, strict=True):
        traces.append((go.Scatter(x=[plan.makespan] * 2, y=height, mode="lines", name=f"makespan {plan.makespan}",
                                  legendgroup=f"makespan {row}", line={"color": MAKESPAN_COLOR}, hoverinfo="name"),
                       row))
    if downtimes(disruptions):
        traces.append((go.Scatter(x=[None], y=[None], mode="markers", name="machine downtime",
                                  marker={"color": DOWNTIME_COLOR, "symbol": "square", "size": 12, "opacity": 0.5}),
                       rows))
    for trace, row in traces:
        fig.add_trace(trace, row=row, col=1)
    jobs = sorted({o.job for o in schedule.operations})
    groups = [getattr(t, "legendgroup", None) for t, _ in traces]

    def visible(job: int | None) -> list[bool]:
        return [g is None or not g.startswith("job ") or job is None or g == f"job {job}" for g in groups]

    buttons = [{"label": "all jobs", "method": "restyle", "args": [{"visible": visible(None)}]}]
    buttons += [{"label": f"job {j}", "method": "restyle", "args": [{"visible": visible(j)}]} for j in jobs]
    fig.update_layout(
        title=title or instance.name, barmode="overlay", bargap=0.2, hovermode="closest",
        height=max(350, min(1400, 28 * instance.num_machines + 150)) * rows, template="plotly_white",
        legend={"title": {"text": "click: hide, double-click: only this"}, "groupclick": "togglegroup"},
        updatemenus=[{"buttons": buttons, "direction": "down", "x": 0.0, "xanchor": "left", "y": 1.08,
                      "yanchor": "bottom", "showactive": True}],
        uniformtext={"minsize": 7, "mode": "hide"})
    fig.update_xaxes(range=[0, x_max * 1.02], title_text="time", row=rows, col=1)
    return fig


def gantt_html(instance: Instance, schedule: Schedule, *, before: Schedule | None = None,
               disruptions: Sequence[Disruption] = (), title: str | None = None) -> str:
    """The interactive Gantt chart as a complete HTML document (plotly embedded, works offline).

    Args:
        instance: The instance the plans schedule.
        schedule: The plan to draw (the repaired one when ``before`` is given).
        before: The plan in force before the repair(s): two panels, changes marked, "before" in every hover.
        disruptions: Their downtime is shaded and their reveal times drawn.
        title: Chart title (default: the instance name).
    """
    fig = gantt_plotly(instance, schedule, before=before, disruptions=disruptions, title=title)
    html: str = fig.to_html(full_html=True, include_plotlyjs=True, config={"displaylogo": False})
    return html
