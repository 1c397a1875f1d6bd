import Foundation

/// A one-line progress bar. On a terminal it redraws itself in place with `\r`; when the output
/// is a file or a pipe (a CI log) it prints a line at every quarter instead.
struct ProgressBar {
    private let width = 30
    private let isTerminal = isatty(STDOUT_FILENO) == 1
    private var lastQuarter = -1
    private var lastPercent = -1

    mutating func update(fraction: Double, completed: Int64, total: Int64) {
        let fraction = min(1, max(0, fraction))
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let line = "    [\(bar)] \(String(format: "%3d", Int(fraction * 100))) %  \(completed)/\(total) bytes"
        if isTerminal {
            // Redraw only when the figure changes: a slow body can bring thousands of events.
            let percent = Int(fraction * 100)
            guard percent != lastPercent || completed == total else { return }
            lastPercent = percent
            print("\r" + line, terminator: "")
            fflush(nil)  // all streams: naming `stdout` is not concurrency-safe in Swift 6
        } else {
            let quarter = Int(fraction * 4)
            if quarter > lastQuarter {
                lastQuarter = quarter
                print(line)
            }
        }
    }

    /// Ends the bar's line on a terminal.
    func finish() {
        if isTerminal { print("") }
    }
}
