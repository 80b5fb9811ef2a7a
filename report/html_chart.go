package report

import (
	"math"
	"strconv"
)

// HTMLBarChart is a horizontal bar chart drawn in Go as inline SVG: one
// row per bar, its label at the left, the bar, and its value text at the
// right. Labels and values are plain strings (cleaned and escaped like
// every string of a page); each bar has a tooltip. Negative values extend
// to the left of a zero line, in another colour.
type HTMLBarChart struct {
	// Caption, if set, is shown above the chart; it is also the chart's
	// accessible name.
	Caption string
	Bars    []HTMLBar
	// Max is the value of a full-length bar; 0 (or less than the largest
	// value) means the largest value, bars and points alike.
	Max float64
	// Empty is shown instead of the chart when there are no bars (""
	// for "Nothing to chart.").
	Empty string
}

// HTMLBar is one bar of an HTMLBarChart.
type HTMLBar struct {
	// Label is shown left of the bar, cut to HTMLChartLabelMax
	// characters (the whole label is in the tooltip).
	Label string
	// Value is the bar's length in the chart's unit. NaN and infinities
	// count as 0.
	Value float64
	// Text is shown right of the bar (the value as people read it:
	// "18.4%", "+1.20s").
	Text string
	// Tip is the tooltip; "" means the label and the text.
	Tip string
	// Points are values marked on the bar's row as dots (each run behind
	// a median, for example).
	Points []float64
	// Tone is the bar's colour.
	Tone HTMLTone
}

// HTMLTone is the colour of a bar.
type HTMLTone int

// Bar tones. The default is blue, orange for a negative value; a chart
// of changes marks better and worse (less time, more time) with
// HTMLToneGood (green) and HTMLToneBad (red).
const (
	HTMLToneDefault HTMLTone = iota
	HTMLToneGood
	HTMLToneBad
)

// HTMLChartLabelMax is the longest bar label shown whole, in characters.
const HTMLChartLabelMax = 44

// Chart geometry, in SVG user units (CSS pixels at scale 1). The label
// column's width is computed from its longest label: labels are drawn in a
// 12px monospace font, whose characters are monoCharW wide (a wide
// character counts two).
const (
	chartWidth    = 900.0
	chartMinPlotW = 260.0
	chartRowH     = 24.0
	chartBarH     = 16.0
	chartPad      = 8.0
	monoCharW     = 7.3
	sansCharW     = 7.0
)

type htmlChartView struct {
	Caption, Empty string
	Width, Height  string
	Bars           []htmlBarView
	ZeroLine       bool
	ZeroX          string
	Top, Bottom    string
}

type htmlBarView struct {
	Tip, Label, Value, Class string

	TrackX, TrackW, X, W, Y, H string
	LabelX, ValueX, TextY      string
	Points                     []htmlPoint
}

type htmlPoint struct{ CX, CY string }

func (c HTMLBarChart) htmlNode(int) htmlNode {
	v := &htmlChartView{Caption: Clean(c.Caption), Empty: Clean(c.Empty)}
	if v.Empty == "" {
		v.Empty = "Nothing to chart."
	}
	if len(c.Bars) == 0 {
		return htmlNode{Kind: "chart", Chart: v}
	}

	// Scale: from the smallest value (or 0) to the largest (or Max).
	finite := func(x float64) float64 {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0
		}
		return x
	}
	lo, hi := 0.0, 0.0
	labels := make([]string, len(c.Bars))
	texts := make([]string, len(c.Bars))
	labelChars, textChars := 4, 1
	for i, b := range c.Bars {
		for _, x := range append([]float64{b.Value}, b.Points...) {
			lo, hi = min(lo, finite(x)), max(hi, finite(x))
		}
		labels[i] = htmlCut(Clean(b.Label), HTMLChartLabelMax)
		texts[i] = Clean(b.Text)
		// Wide characters (Japanese labels) take two columns.
		labelChars = max(labelChars, displayWidth(labels[i]))
		textChars = max(textChars, displayWidth(texts[i]))
	}
	if m := finite(c.Max); m > hi {
		hi = m
	}
	span := hi - lo
	if span <= 0 {
		span = 1
	}

	labelW := float64(labelChars)*monoCharW + 2*chartPad
	textW := float64(textChars)*sansCharW + 2*chartPad
	plotX := labelW
	plotW := max(chartMinPlotW, chartWidth-labelW-textW)
	width := plotX + plotW + textW
	x := func(val float64) float64 { return plotX + (finite(val)-lo)/span*plotW }
	zero := x(0)

	f := func(n float64) string { return strconv.FormatFloat(n, 'f', 1, 64) }
	top := chartPad
	for i, b := range c.Bars {
		y := top + float64(i)*chartRowH
		x0, x1 := zero, x(b.Value)
		class := "bar"
		if finite(b.Value) < 0 {
			x0, x1 = x1, x0
			class = "bar neg"
		}
		switch b.Tone {
		case HTMLToneGood:
			class = "bar good"
		case HTMLToneBad:
			class = "bar bad"
		}
		tip := b.Tip
		if tip == "" {
			tip = b.Label
			if b.Text != "" {
				tip += ": " + b.Text
			}
		}
		bv := htmlBarView{
			Tip: Clean(tip), Label: labels[i], Value: texts[i], Class: class,
			TrackX: f(plotX), TrackW: f(plotW), X: f(x0), W: f(x1 - x0), Y: f(y), H: f(chartBarH),
			LabelX: f(labelW - chartPad), ValueX: f(plotX + plotW + chartPad), TextY: f(y + chartBarH/2 + 4),
		}
		for _, p := range b.Points {
			bv.Points = append(bv.Points, htmlPoint{CX: f(x(p)), CY: f(y + chartBarH/2)})
		}
		v.Bars = append(v.Bars, bv)
	}
	bottom := top + float64(len(c.Bars))*chartRowH
	v.Width = strconv.Itoa(int(math.Ceil(width)))
	v.Height = strconv.Itoa(int(math.Ceil(bottom + chartPad - (chartRowH - chartBarH))))
	if lo < 0 {
		v.ZeroLine, v.ZeroX = true, f(zero)
		v.Top, v.Bottom = f(top-3), f(bottom-(chartRowH-chartBarH)+3)
	}
	return htmlNode{Kind: "chart", Chart: v}
}
