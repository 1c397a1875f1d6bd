import Foundation

/// How a URL appears in the library's log lines and error texts: without its query, fragment
/// and credentials, which may hold secrets.
enum LoggedURL {
    /// `url` without its credentials, query and fragment, which may carry secrets.
    static func describe(_ url: URL) -> String {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        components?.query = nil
        components?.fragment = nil
        components?.user = nil
        components?.password = nil
        return components?.string ?? ""
    }
}
