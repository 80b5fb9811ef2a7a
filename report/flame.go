package report

import (
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/stacktune/stacktune/appcpu"
)

// Flame graph geometry, in SVG user units.
const (
	flameWidth    = 1200.0
	flameRow      = 17.0
	flameTop      = 34.0
	flameMinW     = 0.3 // narrower frames are not drawn (their time is in their parent)
	flameCharW    = 6.6 // an average character of the 11px monospace font
	flameMaxDepth = appcpu.MaxDepth
)

// flameNode is a frame in the tree of stacks: its time (in the after run
// for a differential graph) and the before run's.
type flameNode struct {
	name                 string
	value, before, after float64
	children             map[string]*flameNode
}

func (n *flameNode) child(name string) *flameNode {
	if n.children == nil {
		n.children = map[string]*flameNode{}
	}
	c := n.children[name]
	if c == nil {
		c = &flameNode{name: name}
		n.children[name] = c
	}
	return c
}

// FlameGraph writes the stacks (root first, ms each) as a flame graph:
// a self-contained SVG (no script, nothing loaded), each frame's width its
// share of the CPU, its tooltip its name, time and share; text cleaned and
// escaped.
func FlameGraph(w io.Writer, title string, stacks []appcpu.Stack) error {
	root := &flameNode{name: "all"}
	for _, s := range stacks {
		addStack(root, s.Frames, s.Ms, 0, s.Ms)
	}
	return writeFlame(w, title, root, false)
}

// FlameDiffGraph writes a differential flame graph of two runs' stacks
// (per request): each frame's width the larger of its times before and
// after (so that what is gone can be seen), its colour the change: red
// grew, blue shrank, the deeper the more.
func FlameDiffGraph(w io.Writer, title string, stacks []appcpu.StackChange) error {
	root := &flameNode{name: "all"}
	for _, s := range stacks {
		addStack(root, s.Frames, math.Max(s.AfterMs, s.BeforeMs), s.BeforeMs, s.AfterMs)
	}
	return writeFlame(w, title, root, true)
}

func addStack(root *flameNode, frames []string, v, before, after float64) {
	root.value += v
	root.before += before
	root.after += after
	n := root
	for i, f := range frames {
		if i >= flameMaxDepth {
			break
		}
		n = n.child(f)
		n.value += v
		n.before += before
		n.after += after
	}
}

type flameRect struct {
	x, w  float64
	depth int
	n     *flameNode
}

func writeFlame(w io.Writer, title string, root *flameNode, diff bool) error {
	var rects []flameRect
	maxDepth := 0
	var walk func(n *flameNode, x, scale float64, depth int)
	walk = func(n *flameNode, x, scale float64, depth int) {
		wd := n.value * scale
		if wd < flameMinW {
			return
		}
		rects = append(rects, flameRect{x: x, w: wd, depth: depth, n: n})
		maxDepth = max(maxDepth, depth)
		kids := make([]*flameNode, 0, len(n.children))
		for _, c := range n.children {
			kids = append(kids, c)
		}
		sort.Slice(kids, func(i, j int) bool { return kids[i].name < kids[j].name })
		cx := x
		for _, c := range kids {
			walk(c, cx, scale, depth+1)
			cx += c.value * scale
		}
	}
	if root.value > 0 {
		walk(root, 10, (flameWidth-20)/root.value, 0)
	}
	height := flameTop + float64(maxDepth+1)*flameRow + 10
	e := &errWriter{w: w}
	e.printf(`<svg class="flame" xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s">`+"\n",
		flameWidth, height, flameWidth, height, htmlEscape(Clean(title)))
	e.printf("<style>%s</style>\n", flameCSS)
	e.printf(`<rect class="bg" x="0" y="0" width="%.0f" height="%.0f"></rect>`+"\n", flameWidth, height)
	e.printf(`<text class="t" x="10" y="20">%s</text>`+"\n", htmlEscape(Clean(title)))
	if len(rects) == 0 {
		e.printf(`<text x="10" y="%.0f">No samples.</text>`+"\n", flameTop+12)
	}
	total := root.value
	for _, r := range rects {
		y := height - 10 - float64(r.depth+1)*flameRow
		name := r.n.name
		tip := fmt.Sprintf("%s: %s ms (%s)", name, trim3(r.n.value), Percent(r.n.value/total))
		fill := flameColour(name)
		if diff {
			tip = fmt.Sprintf("%s: %s → %s ms per request (%+.3f)", name, trim3(r.n.before), trim3(r.n.after), r.n.after-r.n.before)
			fill = diffColour(r.n.before, r.n.after, total)
		}
		e.printf(`<g class="f"><title>%s</title><rect class="%s" x="%.2f" y="%.1f" width="%.2f" height="%.1f"></rect>`,
			htmlEscape(Clean(tip)), fill, r.x, y, r.w, flameRow-1)
		if chars := int((r.w - 4) / flameCharW); chars >= 3 {
			label := Clean(name)
			if len([]rune(label)) > chars {
				label = string([]rune(label)[:chars-2]) + ".."
			}
			e.printf(`<text x="%.2f" y="%.1f">%s</text>`, r.x+2, y+flameRow-5, htmlEscape(label))
		}
		e.printf("</g>\n")
	}
	e.printf("</svg>\n")
	return e.err
}

// flameCSS styles a flame graph (inline SVG's style applies to the page
// it sits in: every rule is under svg.flame). Frames are coloured by
// class: w0-w11 warm colours fixed by the frame's name; in a differential
// graph u1-u5 grew (red), d1-d5 shrank (blue), n unchanged.
var flameCSS = func() string {
	var b strings.Builder
	b.WriteString("svg.flame{max-width:100%;height:auto;display:block}svg.flame text{font:11px monospace;fill:#000}svg.flame text.t{font-size:13px}" +
		"svg.flame rect.bg{fill:#fdfdf6}svg.flame g.f:hover rect{stroke:#000;stroke-width:0.7}svg.flame rect.n{fill:#dcdcdc}")
	for i := 0; i < 12; i++ {
		fmt.Fprintf(&b, "svg.flame rect.w%d{fill:rgb(%d,%d,%d)}", i, 205+(i*37)%50, 80+(i*53)%130, 40+(i*29)%50)
	}
	for k := 1; k <= 5; k++ {
		c := 220 - 32*k
		fmt.Fprintf(&b, "svg.flame rect.u%d{fill:rgb(235,%d,%d)}svg.flame rect.d%d{fill:rgb(%d,%d,235)}", k, c, c, k, c, c)
	}
	return b.String()
}()

// flameColour is a warm colour class fixed by the frame's name.
func flameColour(name string) string {
	h := fnv.New32a()
	io.WriteString(h, name)
	return fmt.Sprintf("w%d", h.Sum32()%12)
}

// diffColour is a red class for a frame that grew, blue for one that
// shrank, the deeper the larger the change against the whole.
func diffColour(before, after, total float64) string {
	if total <= 0 {
		return "n"
	}
	d := (after - before) / total
	k := 1 + int(math.Min(4, math.Abs(d)*20))
	switch {
	case d > 0.001:
		return fmt.Sprintf("u%d", k)
	case d < -0.001:
		return fmt.Sprintf("d%d", k)
	}
	return "n"
}

// flameSVG is a flame graph as HTML for a page's block.
func flameSVG(title string, stacks []appcpu.Stack) string {
	var b strings.Builder
	FlameGraph(&b, title, stacks)
	return b.String()
}
