import Loop

/// The contacts of `--contacts FILE`, kept up to date: the file is read at the start and again
/// whenever it is written or replaced (`FileWatch`: inotify through the loop, no polling). A file
/// that cannot be read or parsed is said in one line and changes nothing: the contacts read
/// before stay. Reading happens on the loop's thread, between events (5,000 vCards take about a
/// millisecond: bench/README.md).
public final class ContactDirectory {
    public let path: String
    public private(set) var book = ContactBook()
    private var watch: FileWatch?
    private let report: (String) -> Void
    /// After every successful read: the number of entries and the seconds reading took
    /// (`--verbose` says both).
    public var onRead: ((Int, Double) -> Void)?
    /// How long the latest successful read took, in seconds.
    public private(set) var readDuration = 0.0
    /// The largest file read: a phone's full export is far smaller.
    public static let sizeLimit = 32 << 20

    /// Reads `path` and watches it; what goes wrong is said through `report`, never thrown: a
    /// missing contacts file must not keep telwatch from following calls.
    public init(path: String, loop: EventLoop?, report: @escaping (String) -> Void) {
        self.path = path
        self.report = report
        if let loop {
            do { watch = try FileWatch(loop: loop, path: path) { [weak self] in self?.reload() } } catch {
                report("contacts: \(path) will not be read again when it changes: \(error)")
            }
        }
        reload()
    }

    /// The last number asked for and its answer: a call's events, and the sinks of one event,
    /// ask for the same number again and again.
    private var lastLookup: (number: String, name: String?)?

    /// The contact's name for `number`, or nil.
    public func name(for number: String) -> String? {
        if let lastLookup, lastLookup.number == number { return lastLookup.name }
        let name = book.name(for: number)
        lastLookup = (number, name)
        return name
    }

    /// Reads the file again; on failure the previous contacts stay.
    public func reload() {
        let began = monotonicNow()
        do {
            let bytes = try SmallFile.read(path, limit: ContactDirectory.sizeLimit)
            book = try ContactBook.parse(bytes)
            lastLookup = nil
            readDuration = monotonicNow() - began
            onRead?(book.count, readDuration)
        } catch let error as SmallFile.Failure {
            report("contacts: cannot read \(path): \(error.reason); \(kept)")
        } catch {
            report("contacts: \(path): \(error); \(kept)")
        }
    }

    private var kept: String {
        book.isEmpty ? "no contact names until it is fixed" : "the \(book.count) numbers read before stay"
    }
}
