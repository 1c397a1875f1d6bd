/// Facts about this library.
public enum MoyaInfo {
    /// The version of this library, as sent at the end of the default `User-Agent`.
    public static let version = "0.1.0"
}
