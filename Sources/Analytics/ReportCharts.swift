import Foundation
import Storage

/// The report's inline SVG charts. Sizes are fixed pixels (not scaled to the
/// window) so that labels keep the stylesheet's 13 px. A count of 1–4 is drawn
/// as a dashed outline of height 5 (`drawn`), never its true size.
enum ReportCharts {
    /// The height a count is drawn with: small counts as the threshold.
    static func drawn(_ count: Int) -> Int { Suppression.isSuppressed(count) ? Suppression.threshold : count }

    static let timelineWidth = 1000.0
    /// Room each tick label needs across the time axis ("Jun 15", "18:00").
    static let tickLabelWidth = 64.0
    static let timelineLeft = 56.0, timelineRight = 12.0, timelineTop = 10.0, timelinePlot = 220.0
    static var timelinePlotWidth: Double { timelineWidth - timelineLeft - timelineRight }
    static var maximumTicks: Int { Int(timelinePlotWidth / tickLabelWidth) }

    /// Verified and rejected stacked per bin, every bin of the window in its
    /// place on the axis; a bin without results is an empty slot. Each bin is a
    /// group with a title, so hovering anywhere over it names the hour and its counts.
    static func timeline(_ timeline: ReportTimeline) -> String {
        let bins = timeline.bins
        let top = timelineTop, plot = timelinePlot, left = timelineLeft
        let bottom = top + plot
        let slot = timelinePlotWidth / Double(bins.count)
        let scale = axisScale(maximum: bins.map { drawn($0.verified) + drawn($0.rejected) }.max() ?? 0)
        let unit = timeline.binName
        // Too narrow for a dashed outline to read as one: small cells are then plain grey.
        let narrow = slot < 4 ? " narrow" : ""
        var svg = "<svg id=\"timeline\" class=\"chart\(narrow)\" xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(timelineWidth))\" height=\"\(Int(bottom + 56))\""
            + " role=\"img\" aria-label=\"verified and rejected per \(unit)\">\n"

        for value in stride(from: 0, through: scale.top, by: scale.step) {
            let y = bottom - Double(value) / Double(scale.top) * plot
            svg += "<line class=\"grid\" x1=\"\(fmt(left))\" x2=\"\(fmt(left + timelinePlotWidth))\" y1=\"\(fmt(y))\" y2=\"\(fmt(y))\"/>"
                + "<text class=\"axis\" x=\"\(fmt(left - 6))\" y=\"\(fmt(y + 4))\" text-anchor=\"end\">\(value)</text>\n"
        }
        for (index, bin) in bins.enumerated() {
            let x = left + Double(index) * slot
            let label = StatsTable.timestamp(bin.start)
            let counts = bin.verified + bin.rejected == 0 ? "no results"
                : "verified \(Suppression.display(bin.verified)), rejected \(Suppression.display(bin.rejected))"
            svg += "<g class=\"bin\" data-start=\"\(label)\"><title>\(escape(label)) (\(unit)): \(counts)</title>"
                + "<rect class=\"hit\" x=\"\(fmt(x))\" y=\"\(fmt(top))\" width=\"\(fmt(slot))\" height=\"\(fmt(plot))\"/>"
            var y = bottom
            for (count, kind) in [(bin.verified, "verified"), (bin.rejected, "rejected")] where count > 0 {
                let h = Double(drawn(count)) / Double(scale.top) * plot
                y -= h
                // A gap of a pixel between neighbours, unless slots are too narrow to spare it.
                let inset = slot >= 4 ? 0.5 : 0
                svg += "<rect class=\"\(Suppression.isSuppressed(count) ? "small" : kind)\" x=\"\(fmt(x + inset))\" y=\"\(fmt(y))\""
                    + " width=\"\(fmt(max(0.5, slot - 2 * inset)))\" height=\"\(fmt(h))\"/>"
            }
            svg += "</g>\n"
        }
        svg += "<line class=\"baseline\" x1=\"\(fmt(left))\" x2=\"\(fmt(left + timelinePlotWidth))\" y1=\"\(fmt(bottom))\" y2=\"\(fmt(bottom))\"/>\n"
        for tick in timeline.ticks {
            let x = left + Double(tick.bin) * slot
            svg += "<line class=\"tick\" x1=\"\(fmt(x))\" x2=\"\(fmt(x))\" y1=\"\(fmt(bottom))\" y2=\"\(fmt(bottom + 5))\"/>"
                + "<text class=\"axis\" x=\"\(fmt(x))\" y=\"\(fmt(bottom + 19))\" text-anchor=\"middle\">\(escape(tick.label))</text>"
            if let day = tick.dayLabel {
                svg += "<text class=\"axis day\" x=\"\(fmt(x))\" y=\"\(fmt(bottom + 35))\" text-anchor=\"middle\">\(escape(day))</text>"
            }
            svg += "\n"
        }
        svg += "<text class=\"axis\" x=\"\(fmt(left + timelinePlotWidth))\" y=\"\(fmt(bottom + 52))\" text-anchor=\"end\">UTC, one bar per \(unit)</text>\n"
        return svg + "</svg>\n"
    }

    /// The top of the value axis and its gridline spacing: a 1, 2 or 5 times
    /// a power of ten, about four lines.
    static func axisScale(maximum: Int) -> (top: Int, step: Int) {
        guard maximum > 0 else { return (Suppression.threshold, Suppression.threshold) }
        let rough = Double(maximum) / 4
        let magnitude = pow(10, (log10(rough)).rounded(.down))
        let step = max(1, Int([1.0, 2, 5, 10].map { $0 * magnitude }.first { $0 >= rough } ?? 10 * magnitude))
        return ((maximum + step - 1) / step * step, step)
    }

    static func reasonBars(_ bars: [ReportHeadline.ReasonTotal]) -> String {
        guard !bars.isEmpty else { return "" }
        let labelWidth = 250.0, width = 600.0, row = 24.0
        let maximum = Double(max(1, bars.map { drawn($0.count) }.max() ?? 1))
        var svg = "<svg id=\"reason-bars\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(labelWidth + width + 60))\""
            + " height=\"\(Int(Double(bars.count) * row + 4))\" role=\"img\" aria-label=\"rejection reasons\">\n"
        for (index, bar) in bars.enumerated() {
            let y = Double(index) * row
            let w = Double(drawn(bar.count)) / maximum * width
            svg += "<text class=\"axis\" x=\"0\" y=\"\(fmt(y + 16))\">\(escape(bar.code))</text>"
            svg += "<rect class=\"\(Suppression.isSuppressed(bar.count) ? "small" : "bar")\" x=\"\(fmt(labelWidth))\" y=\"\(fmt(y + 4))\" width=\"\(fmt(w))\" height=\"\(fmt(row - 8))\"/>"
            svg += "<text class=\"axis\" x=\"\(fmt(labelWidth + w + 6))\" y=\"\(fmt(y + 16))\">\(escape(Suppression.display(bar.count)))</text>\n"
        }
        return svg + "</svg>\n"
    }

    /// Percentiles of the groups of 5 events or more (smaller groups' are hidden).
    static func latency(_ rows: [AnalyticsSnapshot.Latency]) -> String {
        let shown = rows.filter { !Suppression.isSuppressed($0.count) && $0.count > 0 }
        guard !shown.isEmpty else { return "" }
        let labelWidth = 250.0, width = 600.0, row = 20.0, group = row * 3 + 10
        let maximum = max(0.001, shown.map(\.p99).max() ?? 0.001)
        var svg = "<svg id=\"latency-bars\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(labelWidth + width + 110))\""
            + " height=\"\(Int(Double(shown.count) * group))\" role=\"img\" aria-label=\"latency percentiles\">\n"
        for (index, item) in shown.enumerated() {
            let top = Double(index) * group
            svg += "<text class=\"axis\" x=\"0\" y=\"\(fmt(top + 16))\">\(escape(item.tenant + " / " + item.flow))</text>\n"
            for (offset, (name, value)) in [("p50", item.p50), ("p90", item.p90), ("p99", item.p99)].enumerated() {
                let y = top + Double(offset) * row + 2
                let w = value / maximum * width
                svg += "<rect class=\"bar\" x=\"\(fmt(labelWidth))\" y=\"\(fmt(y + 2))\" width=\"\(fmt(w))\" height=\"\(fmt(row - 5))\" opacity=\"\(["1", "0.7", "0.45"][offset])\"/>"
                svg += "<text class=\"axis\" x=\"\(fmt(labelWidth + w + 6))\" y=\"\(fmt(y + 15))\">\(name) \(String(format: "%.3f", value)) s</text>\n"
            }
        }
        return svg + "</svg>\n"
    }

    static func fmt(_ value: Double) -> String { String(format: "%.1f", value) }
    static func escape(_ text: String) -> String { ReportHTML.escape(text) }
}
