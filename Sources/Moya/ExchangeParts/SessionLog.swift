import Foundation
import Logging

/// What sessions log on their own account, under the `org.moya.session` label: notices logged
/// once per process (a `URLSessionConfiguration` setting that is not honoured, a cookie no jar
/// kept) and the HTTP cache's debug lines.
enum SessionLog {
    /// The sessions' logger.
    static let logger = Logger(label: "org.moya.session")

    /// The keys of the notices logged so far.
    private static let reported = Protected<Set<String>>([])

    /// Logs `message` at notice level, unless a notice with `key` was logged before in this
    /// process.
    static func noticeOnce(_ key: String, _ message: @autoclosure () -> Logger.Message) {
        guard reported.withLock({ $0.insert(key).inserted }) else { return }
        logger.notice(message())
    }
}
