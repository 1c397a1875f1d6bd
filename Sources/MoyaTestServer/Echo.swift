/// What ``TestServer``'s `/echo` route answers: a JSON description of the request it received.
public struct Echo: Decodable, Sendable {
    /// The request's method, such as `GET`.
    public let method: String
    /// The request target as sent, such as `/echo/x?a=1`.
    public let uri: String
    /// The path of ``uri``, without the query.
    public let path: String
    /// The request's query, without the `?`; `nil` when it has none.
    public let query: String?
    /// Every header field, by lowercased name; the values of a repeated field are joined with
    /// `, `.
    public let headers: [String: String]
    /// Every header field as received, in order, as `[name, value]` pairs.
    public let headerList: [[String]]
    /// The body as UTF-8 text; `nil` when it is empty or not UTF-8.
    public let body: String?
    /// How many body bytes the server received.
    public let bodyLength: Int
}
