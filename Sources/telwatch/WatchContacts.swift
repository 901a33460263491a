import BGRunManager
import Contacts
import Loop
import Pipeline
import Processes

extension ContactDirectory {
    /// `--contacts`, read and followed for `telwatch watch`: problems on stderr, and with
    /// `--verbose` how many numbers each read gave and how long it took. nil without `--contacts`.
    static func forWatch(_ options: WatchOptions, loop: EventLoop) -> ContactDirectory? {
        guard let path = options.contactsFile else { return nil }
        let contacts = ContactDirectory(path: path, loop: loop, report: { warn($0) })
        guard options.verbosity == .verbose else { return contacts }
        // Captures the path, not the directory: the directory keeps this closure.
        func said(_ count: Int, _ seconds: Double) -> String {
            "\(count) numbers from \(path) in \(formatSeconds(seconds)) s"
        }
        warn("contacts: " + said(contacts.book.count, contacts.readDuration))
        contacts.onRead = { count, seconds in warn("contacts: read again: " + said(count, seconds)) }
        return contacts
    }
}
