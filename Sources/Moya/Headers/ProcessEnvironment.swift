import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's environment variables, read where they are (`getenv(3)`), without the copy of
/// the whole environment that `ProcessInfo.environment` makes.
enum ProcessEnvironment {
    /// The value of the environment variable `name`, or `nil` when it is unset.
    static func variable(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
