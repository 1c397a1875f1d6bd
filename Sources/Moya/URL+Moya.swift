import Foundation

extension URL {
    /// Creates the full URL of `target`: its `baseURL` with its `path` appended.
    ///
    /// An empty path returns `baseURL` untouched, query included. Otherwise the path is
    /// appended as a path component: a leading `/` does not double up, a query on the base URL
    /// stays after the new path, and characters such as `?`, spaces and `%` in the path are
    /// percent-encoded.
    ///
    /// - Parameter target: The target whose URL to build.
    public init<T: TargetType>(target: T) {
        let path = target.path
        if path.isEmpty {
            self = target.baseURL
        } else {
            self = target.baseURL.appendingPathComponent(path)
        }
    }
}
