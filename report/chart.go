package report

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/image/font/sfnt"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/stacktune/stacktune/history"
)

// Chart kinds accepted by TransitionsChart.
const (
	ChartSVG  = "svg"
	ChartPNG  = "png"
	ChartHTML = "html"
)

// ChartKinds lists the chart kinds, in the order error messages name them.
var ChartKinds = []string{ChartSVG, ChartPNG, ChartHTML}

// ErrNoSteps is returned by TransitionsChart when there is nothing to draw.
var ErrNoSteps = errors.New("no runs to chart")

// Chart size. Static charts are scoreChartHeight pixels high (at 96 dpi)
// and scoreChartWidth wide, or scoreChartStepWidth per step when that is
// wider (up to scoreChartMaxWidth), so many steps keep readable labels.
const (
	scoreChartWidth     = 960
	scoreChartHeight    = 540
	scoreChartStepWidth = 80
	scoreChartMaxWidth  = 4000
	scoreChartDPI       = 96
)

// ChartKind returns the chart kind for an output file from its extension:
// .svg, .png, .html or .htm (any case).
func ChartKind(path string) (string, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg":
		return ChartSVG, nil
	case ".png":
		return ChartPNG, nil
	case ".html", ".htm":
		return ChartHTML, nil
	}
	return "", fmt.Errorf("cannot tell the chart kind of %q: use a .svg, .png or .html file", path)
}

// scoreChartSize returns the pixel size of an SVG or PNG chart of n
// steps.
func scoreChartSize(n int) (w, h int) {
	return min(max(scoreChartWidth, n*scoreChartStepWidth), scoreChartMaxWidth), scoreChartHeight
}

// TransitionsChart draws the score transitions of history.Transitions: for each step (x axis, labelled
// "1. label" in table order) a bar up to its median score, every run's
// score as a point (a red cross for a run that did not pass), the median
// above the points, and a dashed line at the first step's median. runs are
// the runs steps were made from (history.Transitions(runs)); they give each point
// its pass/fail mark and the subtitle (target, scenario, dates). Runs that
// do not line up with steps are ignored, and every point is drawn as a run.
//
// kind is "svg" or "png" (gonum/plot, 960x540 pixels or wider for many
// steps) or "html" (a
// self-contained ECharts page that works offline, see writeEChart).
func TransitionsChart(w io.Writer, steps []history.Step, runs []history.Run, kind string) error {
	switch kind {
	case ChartSVG, ChartPNG, ChartHTML:
	default:
		return fmt.Errorf("unknown chart kind %q: use one of %s", kind, strings.Join(ChartKinds, ", "))
	}
	if len(steps) == 0 {
		return ErrNoSteps
	}
	c := newScoreChart(steps, runs)
	if kind == ChartHTML {
		return writeEChart(w, c)
	}
	return writePlot(w, c, kind)
}

// scoreChart is what both chart back ends draw.
type scoreChart struct {
	title, subtitle string
	steps           []history.Step
	labels          []string // "1. label"
	passed          [][]bool // per step, per run; nil when runs did not line up
	anyFailed       bool
}

const scoreChartTitle = "Score transitions"

func newScoreChart(steps []history.Step, runs []history.Run) scoreChart {
	c := scoreChart{title: scoreChartTitle, steps: steps}
	for i, s := range steps {
		c.labels = append(c.labels, fmt.Sprintf("%d. %s", i+1, stepLabel(s)))
	}
	if p, ok := matchChartRuns(steps, runs); ok {
		c.passed = p
		for _, s := range steps {
			c.anyFailed = c.anyFailed || s.Passed < s.Runs
		}
	}
	c.subtitle = chartSubtitle(runs)
	return c
}

// matchChartRuns splits runs along steps, checking that they are the runs
// the steps were made from.
func matchChartRuns(steps []history.Step, runs []history.Run) ([][]bool, bool) {
	out := make([][]bool, len(steps))
	k := 0
	for i, s := range steps {
		if k+s.Runs > len(runs) || len(s.Scores) != s.Runs {
			return nil, false
		}
		for j := 0; j < s.Runs; j++ {
			r := runs[k+j]
			if r.Label != s.Label || r.Score != s.Scores[j] {
				return nil, false
			}
			out[i] = append(out[i], r.Passed)
		}
		k += s.Runs
	}
	return out, k == len(runs)
}

// chartSubtitle names the target and scenario when all runs share them,
// and the dates the runs span.
func chartSubtitle(runs []history.Run) string {
	if len(runs) == 0 {
		return ""
	}
	var parts []string
	target, scenario := runs[0].Target, runs[0].Scenario
	first, last := runs[0].Started, runs[0].Started
	for _, r := range runs[1:] {
		if r.Target != target {
			target = ""
		}
		if r.Scenario != scenario {
			scenario = ""
		}
		if r.Started.Before(first) {
			first = r.Started
		}
		if r.Started.After(last) {
			last = r.Started
		}
	}
	if target != "" {
		parts = append(parts, history.StripCredentials(target))
	}
	if scenario != "" {
		parts = append(parts, "scenario "+scenario)
	}
	if !first.IsZero() {
		const day = time.DateOnly
		d := first.Format(day)
		if l := last.Format(day); l != d {
			d += " to " + l
		}
		parts = append(parts, d)
	}
	return strings.Join(parts, ", ")
}

// Colours shared by both back ends.
var (
	chartBarColor     = color.RGBA{R: 0xb8, G: 0xcc, B: 0xe4, A: 0xff}
	chartPointColor   = color.RGBA{R: 0x1f, G: 0x4e, B: 0x89, A: 0xff}
	chartFailColor    = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	chartBaselineGray = color.RGBA{R: 0x70, G: 0x70, B: 0x70, A: 0xff}
)

// maxTickLabel is the longest x tick label, in characters, before it is
// cut with "…"; rotateAfter is the length from which labels are rotated.
const (
	maxTickLabel = 32
	rotateAfter  = 10
)

// chartJitter spreads k points of one step around its x position.
func chartJitter(j, k int) float64 {
	if k <= 1 {
		return 0
	}
	const spread = 0.5 // of a step's width
	return -spread/2 + spread*float64(j)/float64(k-1)
}

func writePlot(w io.Writer, c scoreChart, kind string) error {
	p, err := buildPlot(c, kind)
	if err != nil {
		return err
	}
	wpx, hpx := scoreChartSize(len(c.steps))
	cw, err := draw.NewFormattedCanvas(vg.Length(wpx)*vg.Inch/scoreChartDPI, vg.Length(hpx)*vg.Inch/scoreChartDPI, kind)
	if err != nil {
		return fmt.Errorf("drawing the chart: %w", err)
	}
	dc := draw.New(cw)
	p.Draw(draw.Crop(dc, leftOverhang(p, dc, len(c.steps)), 0, 0, 0))
	if _, err := cw.WriteTo(w); err != nil {
		return fmt.Errorf("writing the chart: %w", err)
	}
	return nil
}

// leftOverhang is how far a rotated first tick label would stick out of
// the canvas on the left (gonum/plot leaves room for tick labels below the
// axis, not beside it), and so how much to move the plot right.
func leftOverhang(p *plot.Plot, dc draw.Canvas, n int) vg.Length {
	ticks := p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max)
	if p.X.Tick.Label.Rotation == 0 || len(ticks) == 0 {
		return 0
	}
	da := p.DataCanvas(dc)
	x, _ := p.Transforms(&da)
	left := x(ticks[0].Value) + p.X.Tick.Label.Rectangle(ticks[0].Label).Min.X
	if left >= 0 {
		return 0
	}
	// Cropping m off the left moves the first tick right by m less its
	// share of the narrower data area (half a step of n).
	const pad = 4
	return (-left + vg.Points(pad)) / vg.Length(1-0.5/float64(n))
}

func buildPlot(c scoreChart, kind string) (*plot.Plot, error) {
	n := len(c.steps)
	p := plot.New()
	p.Title.Text = c.title
	if c.subtitle != "" {
		p.Title.Text += "\n" + c.subtitle
	}
	p.Title.Padding = vg.Points(6)
	p.Y.Label.Text = "score"
	p.Y.Tick.Marker = chartTicks{}
	p.X.Min, p.X.Max = -0.5, float64(n)-0.5

	ticks := make([]plot.Tick, n)
	rotate := n > 8
	face := p.X.Tick.Label.Handler.Cache().Lookup(p.X.Tick.Label.Font, p.X.Tick.Label.Font.Size)
	for i, l := range c.labels {
		if utf8.RuneCountInString(l) > maxTickLabel {
			l = string([]rune(l)[:maxTickLabel-1]) + "…"
		}
		if kind == ChartPNG {
			l = chartDrawable(face, l)
		}
		rotate = rotate || utf8.RuneCountInString(l) > rotateAfter
		ticks[i] = plot.Tick{Value: float64(i), Label: l}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	if rotate {
		p.X.Tick.Label.Rotation = math.Pi / 6
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YCenter
	}

	grid := plotter.NewGrid()
	grid.Vertical.Color = nil
	p.Add(grid)

	// Bars for the medians: about 60% of a step's width.
	medians := make(plotter.Values, n)
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, s := range c.steps {
		medians[i] = s.Median
		lo, hi = math.Min(lo, s.Min), math.Max(hi, s.Max)
	}
	wpx, _ := scoreChartSize(n)
	plotWidth := vg.Length(wpx)*vg.Inch/scoreChartDPI - vg.Points(70)
	bars, err := plotter.NewBarChart(medians, min(plotWidth/vg.Length(n)*0.6, vg.Points(72)))
	if err != nil {
		return nil, fmt.Errorf("chart bars: %w", err)
	}
	bars.Color = chartBarColor
	bars.LineStyle.Width = 0
	p.Add(bars)
	p.Legend.Add("median", bars)

	if b := c.steps[0].Median; c.steps[0].HasFirst {
		line, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: b}, {X: float64(n) - 0.5, Y: b}})
		if err != nil {
			return nil, fmt.Errorf("chart baseline: %w", err)
		}
		line.Color = chartBaselineGray
		line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(line)
		p.Legend.Add("first median", line)
	}

	var ok, failed plotter.XYs
	for i, s := range c.steps {
		for j, v := range s.Scores {
			pt := plotter.XY{X: float64(i) + chartJitter(j, len(s.Scores)), Y: v}
			if c.passed != nil && !c.passed[i][j] {
				failed = append(failed, pt)
			} else {
				ok = append(ok, pt)
			}
		}
	}
	if len(ok) > 0 {
		sc, err := plotter.NewScatter(ok)
		if err != nil {
			return nil, fmt.Errorf("chart points: %w", err)
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: chartPointColor, Radius: vg.Points(3), Shape: draw.CircleGlyph{}}
		p.Add(sc)
		p.Legend.Add("run", sc)
	}
	if len(failed) > 0 {
		sc, err := plotter.NewScatter(failed)
		if err != nil {
			return nil, fmt.Errorf("chart points: %w", err)
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: chartFailColor, Radius: vg.Points(4.5), Shape: chartCross{}}
		p.Add(sc)
		p.Legend.Add("failed run", sc)
	}

	// The median's value above the step's highest point.
	var xys plotter.XYs
	var texts []string
	for i, s := range c.steps {
		xys = append(xys, plotter.XY{X: float64(i), Y: s.Max})
		texts = append(texts, Score(s.Median))
	}
	labels, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: texts})
	if err != nil {
		return nil, fmt.Errorf("chart labels: %w", err)
	}
	for i := range labels.TextStyle {
		labels.TextStyle[i].XAlign = draw.XCenter
		labels.TextStyle[i].Font.Size = vg.Points(9)
	}
	labels.Offset = vg.Point{Y: vg.Points(6)}
	p.Add(labels)

	// Scores start at 0 unless some are negative; leave room above the
	// highest point for its label and the legend.
	if lo >= 0 {
		p.Y.Min = 0
	}
	switch {
	case hi > 0:
		p.Y.Max = hi * 1.2
	case hi == 0 && lo == 0:
		p.Y.Max = 1
	}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.XOffs = vg.Points(8)
	p.Legend.YOffs = -vg.Points(4)
	p.Legend.Padding = vg.Points(2)
	return p, nil
}

// chartDrawable replaces the characters the chart font (Liberation, embedded
// in gonum/plot) has no glyph for, such as Japanese, with '?': a PNG would
// otherwise leave a gap the width of the missing glyphs and misplace the
// label. SVG keeps them, since viewers fall back to fonts that have them.
func chartDrawable(face font.Face, s string) string {
	if face.Face == nil {
		return s
	}
	var buf sfnt.Buffer
	return strings.Map(func(r rune) rune {
		if i, err := face.Face.GlyphIndex(&buf, r); err != nil || i == 0 {
			return '?'
		}
		return r
	}, s)
}

// chartCross is draw.CrossGlyph drawn with a thicker line, to stand out
// among the points.
type chartCross struct{}

func (chartCross) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(1.5)})
	r := sty.Radius * vg.Length(math.Cos(math.Pi/4))
	for _, d := range []vg.Point{{X: r, Y: r}, {X: r, Y: -r}} {
		var p vg.Path
		p.Move(pt.Sub(d))
		p.Line(pt.Add(d))
		c.Stroke(p)
	}
}

// chartTicks labels about five round values (1, 2 or 5 times a power of
// ten) with an unlabelled tick between each, where plot.DefaultTicks often
// labels only two or three.
type chartTicks struct{}

func (chartTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	raw := (hi - lo) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{2, 5, 10} {
		if step >= raw {
			break
		}
		step = m * mag
	}
	decimals := max(0, int(-math.Floor(math.Log10(step))))
	var ticks []plot.Tick
	first := math.Ceil(lo / step)
	if m := (first - 0.5) * step; m >= lo {
		ticks = append(ticks, plot.Tick{Value: m})
	}
	for k := first; k*step <= hi+step*1e-9; k++ {
		v := k * step
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', decimals, 64)})
		if m := v + step/2; m <= hi {
			ticks = append(ticks, plot.Tick{Value: m})
		}
	}
	return ticks
}
