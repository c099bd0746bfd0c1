// intruder.h — intruder (WCL, Table 3: STAMP's intruder): network
// intrusion detection, reassembling flows from fragments that arrive in
// random order and checking each whole flow against attack signatures.
//
// setup() generates the capture (written from the benchmark's
// description): `scale` flows, each a payload of 16..96 random lower-case
// letters, one in ten with an attack signature (a word in capitals from a
// small dictionary) at a random place in it; each payload cut into
// fragments of up to 16 bytes, one packet each {flow, fragment, count,
// length, next, data[16]}.  The packets go into the pool in one array,
// and a queue of their offsets (the capture) in a random order, with its
// head; the flow table has a record per flow {epoch, count, received,
// head, status}, and a ground-truth array says which flows are attacks
// (the generator's record, read by verify() only).
//
// A transaction captures the packet at the queue's head (head + 1) and
// reassembles: it inserts the packet into its flow's list of fragments,
// sorted by fragment number (the packet's next, then its predecessor's
// next or the flow's head), and counts it (received + 1; the first one
// records the flow's fragment count).  When the flow is whole it is taken
// out of the reassembly table (head back to 0, status complete), its
// payload is assembled from the list and searched for every signature,
// and the root's counters of completed flows and their fragments, and of
// detected attacks, go up.  Its stores are counters, small numbers and
// offsets within the pool (half writes), and next links written with the
// value they hold (a fragment that goes last keeps next 0; a capture
// replayed in the same order links as before: unmodified).  When the
// queue runs dry the capture is replayed: the epoch goes up, the head and
// the counters go back to 0, and a flow record from an earlier epoch
// counts as empty, reset the first time the new epoch touches it.  One
// DRAM lock serializes the transactions (the queue's head is shared).
//
// verify(): fragments are conserved (queued + in the lists of flows being
// reassembled + in completed flows == generated), every list is sorted,
// holds only its flow's fragments, as many as received and only packets
// already dequeued; completed flows hold all their fragments; detections
// equal the attacks among the completed flows; and the packets dequeued
// since setup()/attach() are what the committed transactions counted.
#ifndef SOFTWRAP_WORKLOADS_INTRUDER_H_
#define SOFTWRAP_WORKLOADS_INTRUDER_H_

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "workload.h"

namespace softwrap::workloads {

inline constexpr uint64_t kIntruderFragmentBytes = 16, kIntruderMaxPayload = 96;

inline uint64_t intruder_heap_bytes(const Params& p) {
  const uint64_t packets = p.scale * (kIntruderMaxPayload / kIntruderFragmentBytes);  // at most
  return packets * (56 + 8) + p.scale * (40 + 8) + 65536;
}

inline const Info kIntruderInfo{"intruder",
                                "intruder",
                                "WCL, Table 3 (STAMP intruder)",
                                "captures one packet from a queue, inserts it into its flow's sorted "
                                "fragment list; a whole flow is "
                                "assembled and checked against attack signatures",
                                nullptr,
                                1,
                                "flows (about 4 packets each)",
                                16'384,
                                8,
                                intruder_heap_bytes};

template <class A>
class Intruder {
 public:
  static const Info& info() { return kIntruderInfo; }
  Intruder(std::vector<A>* access, const Params& p) : acc_(*access), p_(resolve(info(), p)), dequeued_(p_.threads) {}
  const Params& params() const { return p_; }

  void setup();
  void attach();
  void run(uint32_t tid, uint64_t transactions);
  std::string verify();

  void damage() {
    A& a = acc_[0];
    Wrap<A> w(a);
    a.store(&root_->detected, a.load(&root_->detected) + 1);
    w.commit();
  }

 private:
  static constexpr uint64_t kMagic = 0x494E545255444531ull;  // "INTRUDE1"
  static constexpr uint64_t kPending = 0, kComplete = 1;
  struct Root {
    uint64_t magic, flows, packets, packet_array, queue, flow_table, truth;
    uint64_t epoch, head, completed_flows, completed_fragments, detected;
  };
  struct Packet {
    uint64_t flow, fragment, count, length, next;
    char data[kIntruderFragmentBytes];
  };
  struct Flow {
    uint64_t epoch, count, received, head, status;
  };
  static_assert(sizeof(Packet) == 56 && sizeof(Flow) == 40);

  static const std::vector<std::string_view>& signatures() {
    static const std::vector<std::string_view> s = {"EXPLOIT",  "ROOTKIT", "OVERFLOW", "SHELLCODE",
                                                    "BACKDOOR", "TROJAN",  "PAYLOAD",  "INJECT"};
    return s;
  }
  static bool attack(const std::string& payload) {
    for (std::string_view s : signatures()) {
      if (payload.find(s) != std::string::npos) return true;
    }
    return false;
  }
  void renew(A& a, Flow* f, uint64_t e) {
    if (a.load(&f->epoch) == e) return;
    a.store(&f->epoch, e);
    a.store(&f->received, uint64_t{0});
    a.store(&f->head, uint64_t{0});
    a.store(&f->status, kPending);
  }
  void adopt();

  std::vector<A>& acc_;
  Params p_;
  ThreadCounts dequeued_;  // packets the committed transactions dequeued since
                           // setup()/attach()
  std::mutex mu_;
  Root* root_ = nullptr;
  Packet* packets_ = nullptr;
  uint64_t* queue_ = nullptr;
  Flow* flows_ = nullptr;
  uint64_t* truth_ = nullptr;
  uint64_t nflows_ = 0, npackets_ = 0, progress0_ = 0;
  std::string payload_;  // the flow being assembled (under mu_)
};

template <class A>
void Intruder<A>::setup() {
  A& a = acc_[0];
  nflows_ = std::max<uint64_t>(p_.scale, 1);
  Rng g(p_.seed);
  std::vector<Packet> packets;
  std::vector<uint64_t> truth(nflows_);
  for (uint64_t f = 0; f < nflows_; ++f) {
    std::string s(g.between(16, kIntruderMaxPayload), ' ');
    for (char& c : s) c = static_cast<char>('a' + g.below(26));
    if (g.percent(10)) {
      const std::string_view sig = signatures()[g.below(signatures().size())];
      s.replace(g.below(s.size() - sig.size() + 1), sig.size(), sig);
      truth[f] = 1;
    }
    const uint64_t count = (s.size() + kIntruderFragmentBytes - 1) / kIntruderFragmentBytes;
    for (uint64_t k = 0; k < count; ++k) {
      Packet p{f, k, count, std::min<uint64_t>(kIntruderFragmentBytes, s.size() - k * kIntruderFragmentBytes), 0, {}};
      std::memcpy(p.data, s.data() + k * kIntruderFragmentBytes, p.length);
      packets.push_back(p);
    }
  }
  npackets_ = packets.size();
  std::vector<uint64_t> order(npackets_);
  for (uint64_t i = 0; i < npackets_; ++i) order[i] = i;
  for (uint64_t i = npackets_; i > 1; --i) std::swap(order[i - 1], order[g.below(i)]);
  {
    Wrap<A> w(a);
    root_ = static_cast<Root*>(a.root(sizeof(Root)));
    packets_ = static_cast<Packet*>(a.alloc(npackets_ * sizeof(Packet)));
    queue_ = static_cast<uint64_t*>(a.alloc(npackets_ * 8));
    flows_ = static_cast<Flow*>(a.alloc(nflows_ * sizeof(Flow)));
    truth_ = static_cast<uint64_t*>(a.alloc(nflows_ * 8));
    const Root r{0, nflows_, npackets_, a.off(packets_), a.off(queue_), a.off(flows_), a.off(truth_), 0, 0, 0, 0, 0};
    a.write(root_, &r, sizeof r);
    w.commit();
  }
  in_wraps(a, npackets_, 64, [&](uint64_t i) { a.write(&packets_[i], &packets[i], sizeof(Packet)); });
  write_words(a, queue_, npackets_, [&](uint64_t i) { return a.off(&packets_[order[i]]); });
  write_words(a, &flows_[0].epoch, 5 * nflows_, [](uint64_t) { return uint64_t{0}; });
  write_words(a, truth_, nflows_, [&](uint64_t i) { return truth[i]; });
  Wrap<A> w(a);
  a.store(&root_->magic, kMagic);  // last: a half-built pool is not adopted
  w.commit();
  adopt();
}

template <class A>
void Intruder<A>::attach() {
  A& a = acc_[0];
  root_ = find_root<A, Root>(a, kMagic, "intruder");
  nflows_ = a.load(&root_->flows);
  npackets_ = a.load(&root_->packets);
  packets_ = a.template ptr<Packet>(a.load(&root_->packet_array));
  queue_ = a.template ptr<uint64_t>(a.load(&root_->queue));
  flows_ = a.template ptr<Flow>(a.load(&root_->flow_table));
  truth_ = a.template ptr<uint64_t>(a.load(&root_->truth));
  if (nflows_ == 0 || npackets_ == 0 || !packets_ || !queue_ || !flows_ || !truth_) {
    throw WorkloadError("intruder: the root names an empty capture");
  }
  adopt();
}

template <class A>
void Intruder<A>::adopt() {
  A& a = acc_[0];
  progress0_ = a.load(&root_->epoch) * npackets_ + a.load(&root_->head);
  dequeued_.clear();
}

template <class A>
void Intruder<A>::run(uint32_t tid, uint64_t transactions) {
  A& a = acc_[tid];
  for (uint64_t t = 0; t < transactions; ++t) {
    std::lock_guard<std::mutex> g(mu_);
    Wrap<A> w(a);
    uint64_t epoch = a.load(&root_->epoch), head = a.load(&root_->head);
    if (head == npackets_) {  // the capture is replayed
      a.store(&root_->epoch, ++epoch);
      a.store(&root_->completed_flows, uint64_t{0});
      a.store(&root_->completed_fragments, uint64_t{0});
      a.store(&root_->detected, uint64_t{0});
      head = 0;
    }
    // Capture.
    const uint64_t po = a.load(&queue_[head]);
    a.store(&root_->head, head + 1);
    Packet* p = a.template ptr<Packet>(po);
    const uint64_t fid = a.load(&p->flow), frag = a.load(&p->fragment), count = a.load(&p->count);
    // Reassembly: into the flow's list, sorted by fragment number.
    Flow* f = &flows_[fid];
    renew(a, f, epoch);
    const uint64_t received = a.load(&f->received);
    if (received == 0) a.store(&f->count, count);
    uint64_t* link = &f->head;
    for (uint64_t q = a.load(link); q != 0; q = a.load(link)) {
      Packet* x = a.template ptr<Packet>(q);
      if (a.load(&x->fragment) > frag) break;
      link = &x->next;
    }
    a.store(&p->next, a.load(link));
    a.store(link, po);
    a.store(&f->received, received + 1);
    if (received + 1 == a.load(&f->count)) {
      // Whole: out of the reassembly table, assembled, and checked.
      payload_.clear();
      for (uint64_t q = a.load(&f->head); q != 0;) {
        Packet* x = a.template ptr<Packet>(q);
        char data[kIntruderFragmentBytes];
        const uint64_t len = std::min<uint64_t>(a.load(&x->length), sizeof data);
        a.read(data, x->data, len);
        payload_.append(data, len);
        q = a.load(&x->next);
      }
      a.store(&f->head, uint64_t{0});
      a.store(&f->status, kComplete);
      a.store(&root_->completed_flows, a.load(&root_->completed_flows) + 1);
      a.store(&root_->completed_fragments, a.load(&root_->completed_fragments) + received + 1);
      if (attack(payload_)) a.store(&root_->detected, a.load(&root_->detected) + 1);
    }
    w.commit();
    dequeued_.add(tid, 1);
  }
}

template <class A>
std::string Intruder<A>::verify() {
  A& a = acc_[0];
  const uint64_t epoch = a.load(&root_->epoch), head = a.load(&root_->head);
  if (head > npackets_) return mismatch("intruder: the queue's head", head, npackets_);
  const uint64_t got = epoch * npackets_ + head, want = progress0_ + static_cast<uint64_t>(dequeued_.sum());
  if (got != want) return mismatch("intruder: packets dequeued (epochs x packets + head)", got, want);
  std::unordered_map<uint64_t, uint64_t> position;  // packet offset -> its place in the queue
  for (uint64_t i = 0; i < npackets_; ++i) position.emplace(a.load(&queue_[i]), i);
  if (position.size() != npackets_) return "intruder: the queue holds a packet twice";
  uint64_t in_lists = 0, done_flows = 0, done_fragments = 0, attacks = 0;
  for (uint64_t fid = 0; fid < nflows_; ++fid) {
    const Flow* f = &flows_[fid];
    const std::string fn = "intruder: flow " + std::to_string(fid);
    const uint64_t fe = a.load(&f->epoch);
    if (fe > epoch) return mismatch(fn + ": epoch", fe, epoch);
    if (fe < epoch) continue;  // empty in this epoch
    const uint64_t received = a.load(&f->received), status = a.load(&f->status);
    uint64_t n = 0, last = 0;
    for (uint64_t q = a.load(&f->head); q != 0; q = a.load(&a.template ptr<Packet>(q)->next)) {
      const auto it = position.find(q);
      if (it == position.end()) return fn + ": its list holds something that is not a captured packet";
      if (it->second >= head) return fn + ": its list holds a packet still queued";
      const Packet* x = a.template ptr<Packet>(q);
      if (a.load(&x->flow) != fid)
        return fn + ": its list holds a fragment of flow " + std::to_string(a.load(&x->flow));
      const uint64_t frag = a.load(&x->fragment);
      if (n > 0 && frag <= last) return fn + ": its fragments are out of order";
      last = frag;
      if (++n > received) return mismatch(fn + ": fragments in its list (more than received)", n, received);
    }
    if (status == kComplete) {
      if (n != 0) return fn + ": complete, but still in the reassembly table";
      if (received != a.load(&f->count)) return mismatch(fn + ": complete with fragments", received, a.load(&f->count));
      ++done_flows;
      done_fragments += received;
      attacks += a.load(&truth_[fid]);
    } else {
      if (status != kPending) return mismatch(fn + ": status", status, kPending);
      if (n != received) return mismatch(fn + ": fragments in its list", n, received);
      if (received >= a.load(&f->count) && received > 0) return fn + ": whole, but not completed";
      in_lists += n;
    }
  }
  if (a.load(&root_->completed_flows) != done_flows) {
    return mismatch("intruder: completed flows counted", a.load(&root_->completed_flows), done_flows);
  }
  if (a.load(&root_->completed_fragments) != done_fragments) {
    return mismatch("intruder: fragments of completed flows counted", a.load(&root_->completed_fragments),
                    done_fragments);
  }
  if ((npackets_ - head) + in_lists + done_fragments != npackets_) {
    return mismatch("intruder: fragments queued + being reassembled + in completed flows",
                    (npackets_ - head) + in_lists + done_fragments, npackets_);
  }
  if (a.load(&root_->detected) != attacks) {
    return mismatch("intruder: attacks detected among the completed flows", a.load(&root_->detected), attacks);
  }
  return "";
}

}  // namespace softwrap::workloads

#endif  // SOFTWRAP_WORKLOADS_INTRUDER_H_
