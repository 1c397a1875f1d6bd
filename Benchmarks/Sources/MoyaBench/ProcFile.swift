import Foundation

/// Reads files under `/proc`.
enum ProcFile {
    /// The whole text of `path`, or `nil` when it cannot be read. (`/proc` files report a size of
    /// 0, and reading one with `String(contentsOfFile:)` can stop after the first page, which cut
    /// `/proc/self/net/tcp` short once it had a few dozen lines.)
    static func read(_ path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.readToEnd() else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}
