import Foundation
import PushCore

extension ReportRenderer {
    /// A stacked bar chart of deliveries per bucket by status: one `<g
    /// class="series" data-status="…">` per status holding one `<rect>` per
    /// bucket, a time axis, a count axis and a legend. No scripts, no fonts.
    public static func svg(_ s: StatusSeries, title: String = "Deliveries over time by status") -> String {
        let width = 960.0, height = 420.0
        let left = 64.0, right = 240.0, top = 40.0, bottom = 56.0
        let plotW = width - left - right, plotH = height - top - bottom
        let n = s.buckets.count
        let totals = (0..<n).map { i in s.series.reduce(0) { $0 + $1.counts[i] } }
        let maxTotal = max(1, totals.max() ?? 1)
        let yMax = niceCeiling(maxTotal)
        let slot = n > 0 ? plotW / Double(n) : plotW
        let barW = max(1, slot * 0.8)
        func y(_ v: Int) -> Double { top + plotH - plotH * Double(v) / Double(yMax) }
        func f(_ v: Double) -> String { String(format: "%.1f", v) }

        var out = ##"<svg xmlns="http://www.w3.org/2000/svg" width="\##(Int(width))" height="\##(Int(height))" viewBox="0 0 \##(Int(width)) \##(Int(height))" font-family="sans-serif" font-size="12">"##
        out += "\n<title>\(escape(title))</title>\n"
        out += ##"<rect x="0" y="0" width="\##(Int(width))" height="\##(Int(height))" fill="#ffffff"/>"## + "\n"
        out += ##"<text x="\##(f(left))" y="24" font-size="16" font-weight="bold">\##(escape(title))</text>"## + "\n"
        // Count axis with 4 grid lines.
        out += "<g class=\"axis y\">\n"
        for k in 0...4 {
            let v = yMax * k / 4
            out += ##"<line x1="\##(f(left))" x2="\##(f(left + plotW))" y1="\##(f(y(v)))" y2="\##(f(y(v)))" stroke="#e0e0e0"/>"##
            out += ##"<text x="\##(f(left - 6))" y="\##(f(y(v) + 4))" text-anchor="end">\##(v)</text>"## + "\n"
        }
        out += "</g>\n"
        // Series, bottom to top in status order.
        var base = Array(repeating: 0, count: n)
        for (status, counts) in s.series {
            out += ##"<g class="series" data-status="\##(escape(status))" fill="\##(color(status))">"## + "\n"
            for i in 0..<n {
                let y0 = y(base[i]), y1 = y(base[i] + counts[i])
                let x = left + slot * Double(i) + (slot - barW) / 2
                out += ##"<rect x="\##(f(x))" y="\##(f(y1))" width="\##(f(barW))" height="\##(f(y0 - y1))"><title>\##(escape(status)) \##(Timestamps.format(s.buckets[i])): \##(counts[i])</title></rect>"## + "\n"
                base[i] += counts[i]
            }
            out += "</g>\n"
        }
        // Time axis: about 6 labels.
        out += "<g class=\"axis x\">\n"
        out += ##"<line x1="\##(f(left))" x2="\##(f(left + plotW))" y1="\##(f(top + plotH))" y2="\##(f(top + plotH))" stroke="#616161"/>"## + "\n"
        let step = max(1, (n + 5) / 6)  // about 6 labels
        for i in stride(from: 0, to: n, by: step) {
            let x = left + slot * (Double(i) + 0.5)
            out += ##"<text x="\##(f(x))" y="\##(f(top + plotH + 18))" text-anchor="middle">\##(escape(axisLabel(s.buckets[i], bucketSeconds: s.bucketSeconds)))</text>"## + "\n"
        }
        out += ##"<text x="\##(f(left + plotW / 2))" y="\##(f(height - 10))" text-anchor="middle" fill="#616161">UTC, \##(s.bucketSeconds) s per bar</text>"## + "\n"
        out += "</g>\n"
        // Legend, top status first.
        out += "<g class=\"legend\">\n"
        for (i, entry) in s.series.reversed().enumerated() {
            let ly = top + 8 + Double(i) * 20
            out += ##"<rect x="\##(f(width - right + 16))" y="\##(f(ly - 10))" width="12" height="12" fill="\##(color(entry.status))"/>"##
            out += ##"<text x="\##(f(width - right + 34))" y="\##(f(ly))">\##(escape(legendLabel(entry.status))) (\##(entry.counts.reduce(0, +)))</text>"## + "\n"
        }
        out += "</g>\n</svg>\n"
        return out
    }

    /// A horizontal bar chart of labelled counts (retries, rejections): one
    /// `<rect class="bar">` per entry, its label and value beside it; bar i
    /// in `colors[i]` when given, else in `color`.
    public static func barChart(_ bars: [(label: String, value: Int)], title: String, color: String = "#1e88e5",
                                colors: [String] = []) -> String {
        let width = 960.0, rowH = 22.0, left = 260.0, right = 80.0, top = 40.0
        let height = top + rowH * Double(max(1, bars.count)) + 16
        let maxValue = max(1, bars.map(\.value).max() ?? 1)
        func f(_ v: Double) -> String { String(format: "%.1f", v) }
        var out = ##"<svg xmlns="http://www.w3.org/2000/svg" width="\##(Int(width))" height="\##(Int(height))" viewBox="0 0 \##(Int(width)) \##(Int(height))" font-family="sans-serif" font-size="12">"##
        out += "\n<title>\(escape(title))</title>\n"
        out += ##"<rect x="0" y="0" width="\##(Int(width))" height="\##(Int(height))" fill="#ffffff"/>"## + "\n"
        out += ##"<text x="8" y="24" font-size="16" font-weight="bold">\##(escape(title))</text>"## + "\n"
        if bars.isEmpty { out += ##"<text x="8" y="\##(f(top + 14))" fill="#616161">none</text>"## + "\n" }
        for (i, bar) in bars.enumerated() {
            let y = top + rowH * Double(i)
            let w = (width - left - right) * Double(bar.value) / Double(maxValue)
            out += ##"<text x="\##(f(left - 8))" y="\##(f(y + 15))" text-anchor="end">\##(escape(String(bar.label.prefix(40))))</text>"##
            let fill = i < colors.count ? colors[i] : color
            out += ##"<rect class="bar" x="\##(f(left))" y="\##(f(y + 3))" width="\##(f(max(1, w)))" height="\##(f(rowH - 6))" fill="\##(fill)"/>"##
            out += ##"<text x="\##(f(left + max(1, w) + 6))" y="\##(f(y + 15))">\##(bar.value)</text>"## + "\n"
        }
        out += "</svg>\n"
        return out
    }

    static func niceCeiling(_ v: Int) -> Int {
        var magnitude = 1
        while magnitude * 10 <= v { magnitude *= 10 }
        for m in [1, 2, 4, 5, 10] where m * magnitude >= v { return m * magnitude }
        return v
    }

    static func axisLabel(_ date: Date, bucketSeconds: Int) -> String {
        let text = Timestamps.format(date)  // 2026-11-21T15:04:05Z
        let time = text.split(separator: "T").last.map(String.init) ?? text
        let hms = String(time.prefix(8))
        return bucketSeconds >= 86_400 ? String(text.prefix(10)) : bucketSeconds >= 60 ? String(hms.prefix(5)) : hms
    }
}
