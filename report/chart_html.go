package report

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"image/color"
	"io"
	"math"
	"strings"
	"sync"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
)

// echartsGz is ECharts 5.6.0's dist/echarts.min.js, gzipped (see
// assets/README.md). go-echarts only knows how to point <script src> at an
// assets host (a CDN by default); the page inlines the library instead, so
// it opens offline and loads nothing from anywhere.
//
//go:embed assets/echarts-5.6.0.min.js.gz
var echartsGz []byte

var echartsJS = sync.OnceValues(func() (string, error) {
	zr, err := gzip.NewReader(bytes.NewReader(echartsGz))
	if err != nil {
		return "", err
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return "", err
	}
	return string(b), nil
})

// echartsChartID fixes the element ID go-echarts would otherwise draw at
// random, so the same steps give the same page.
const echartsChartID = "stacktune_history"

func echartsColor(c color.RGBA) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

// echartsScriptSafe keeps a user's label from ending the inline <script>
// that carries the chart options: go-echarts writes them as unescaped
// JSON, so "</" and "<!--" get a zero-width space after the '<'
// (invisible in the chart). It is not an HTML escaper (the labels are in
// a script, where character references mean nothing): text in HTML goes
// through htmlEscape.
var echartsScriptSafe = strings.NewReplacer("</", "<\u200b/", "<!--", "<\u200b!--")

// writeEChart writes a self-contained HTML page with the same chart as
// the static kinds (bars for medians, run points, failed runs as red
// crosses, a dashed line at the first median), with tooltips.
func writeEChart(w io.Writer, c scoreChart) (err error) {
	js, err := echartsJS()
	if err != nil {
		return fmt.Errorf("reading the embedded ECharts: %w", err)
	}
	labels := make([]string, len(c.labels))
	for i, l := range c.labels {
		labels[i] = echartsScriptSafe.Replace(l)
	}
	wpx, hpx := scoreChartSize(len(c.steps))

	bar := charts.NewBar()
	bar.SetGlobalOptions(
		charts.WithInitializationOpts(opts.Initialization{
			PageTitle:  "stacktune: " + strings.ToLower(c.title[:1]) + c.title[1:],
			Width:      fmt.Sprintf("%dpx", wpx),
			Height:     fmt.Sprintf("%dpx", hpx),
			ChartID:    echartsChartID,
			AssetsHost: "", // nothing is loaded from a host: see echartsGz
		}),
		charts.WithTitleOpts(opts.Title{Title: c.title, Subtitle: echartsScriptSafe.Replace(c.subtitle), Left: "center"}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "item"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Bottom: "0"}),
		charts.WithXAxisOpts(opts.XAxis{AxisLabel: &opts.AxisLabel{Interval: "0", Rotate: 30}}),
		// The y axis stays at the left edge instead of crossing the hidden
		// x axis at 0 (the first step).
		charts.WithYAxisOpts(opts.YAxis{Name: "score", AxisLine: &opts.AxisLine{OnZero: opts.Bool(false)}}),
		charts.WithAnimation(false),
		charts.WithGridOpts(opts.Grid{Bottom: "120", Left: "80", Right: "40"}),
	)
	bar.ClearPresetJSAssets()
	bar.AddCustomizedHeaders("<script>\n" + js + "\n</script>")

	medians := make([]opts.BarData, len(c.steps))
	for i, s := range c.steps {
		medians[i] = opts.BarData{Value: math.Round(s.Median*100) / 100} // as Score shows it
	}
	seriesOpts := []charts.SeriesOpts{
		charts.WithItemStyleOpts(opts.ItemStyle{Color: echartsColor(chartBarColor)}),
		charts.WithBarChartOpts(opts.BarChart{BarWidth: "60%"}),
		// The median's value at the foot of its bar, clear of the points.
		charts.WithLabelOpts(opts.Label{Show: opts.Bool(true), Position: "insideBottom"}),
	}
	if c.steps[0].HasFirst {
		seriesOpts = append(seriesOpts,
			charts.WithMarkLineNameYAxisItemOpts(opts.MarkLineNameYAxisItem{Name: "first median", YAxis: c.steps[0].Median}),
			charts.WithMarkLineStyleOpts(opts.MarkLineStyle{
				Symbol:    []string{"none", "none"},
				LineStyle: &opts.LineStyle{Color: echartsColor(chartBaselineGray), Type: "dashed"},
				Label:     &opts.Label{Show: opts.Bool(true), Position: "insideStartTop", Formatter: "first median {c}"},
			}))
	}
	bar.SetXAxis(labels).AddSeries("median", medians, seriesOpts...)
	// The points sit on a hidden value axis aligned with the categories
	// (step i at x = i), so several runs of a step spread side by side as
	// in the static charts.
	n := float64(len(c.steps))
	bar.ExtendXAxis(opts.XAxis{Type: "value", Show: opts.Bool(false), Min: -0.5, Max: n - 0.5})

	var ok, failed []opts.ScatterData
	for i, s := range c.steps {
		for j, v := range s.Scores {
			d := opts.ScatterData{Value: []any{float64(i) + chartJitter(j, len(s.Scores)), v}}
			if c.passed != nil && !c.passed[i][j] {
				failed = append(failed, d)
			} else {
				ok = append(ok, d)
			}
		}
	}
	points := charts.NewScatter()
	pointTip := charts.WithSeriesTooltipOpts(opts.SeriesTooltip{
		Formatter: opts.FuncOpts(`function (p) { return p.seriesName + ': ' + p.value[1]; }`),
	})
	points.AddSeries("run", ok,
		charts.WithItemStyleOpts(opts.ItemStyle{Color: echartsColor(chartPointColor)}),
		charts.WithScatterChartOpts(opts.ScatterChart{XAxisIndex: 1, SymbolSize: 8}),
		pointTip)
	if len(failed) > 0 {
		points.AddSeries("failed run", failed,
			charts.WithItemStyleOpts(opts.ItemStyle{Color: echartsColor(chartFailColor)}),
			charts.WithScatterChartOpts(opts.ScatterChart{XAxisIndex: 1, Symbol: "diamond", SymbolSize: 10}),
			pointTip)
	}
	bar.Overlap(points)

	// go-echarts panics on template errors; turn that into an error.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("rendering the HTML chart: %v", r)
		}
	}()
	if err := bar.Render(w); err != nil {
		return fmt.Errorf("writing the HTML chart: %w", err)
	}
	return nil
}
