// vacation.h — Vacation (WCL, Table 3: STAMP vacation): a travel
// reservation system whose tables are persistent B+trees.
//
// Four tables, each a WlBTree (wl_btree.h) keyed by id: cars, flights and
// rooms map an id to an item record {id, total, used, free, price}, and
// customers map an id to a customer record {id, list}, the head of a
// linked list of reservations {type, item id, price, next}.  Setup fills
// each item table with ids 1..scale (capacity 100..500, price 50..90) and
// the customers table with ids 1..scale, none holding a reservation.
// Records and nodes are separate pool objects that refer to each other by
// offset (64-bit words throughout).
//
// A transaction is one client action with STAMP's "-n2 -q90 -u98" mix:
// queries touch ids in the lower 90 % of each table; 98 % of the actions
// make a reservation, 1 % delete a customer, 1 % update the tables.
//   make-reservation: 1-2 queries of a random type and id; for each type
//     queried, the cheapest item found with a free place is reserved for a
//     random customer (added if absent): used + 1, free - 1, the price
//     rewritten (the value the item has, as the reservation code does),
//     and a reservation prepended to the customer's list.
//   delete-customer: a random customer, if present, has every reservation
//     cancelled (used - 1, free + 1 on its item), its list freed, and is
//     erased from the customers table.
//   update-tables: 1-2 updates of a random type and id: half add 100
//     places (an absent item is created) and set the price, which is
//     often the one it had; half remove 100 free places (an item left
//     with none is erased).
// Threads lock the tables an action touches (one DRAM lock per table, in
// table order); the B+trees themselves take no locks.
//
// verify(): each table's B+tree structure; per item used + free == total
// and the id matches its key; the customers' reservations name existing
// items and add up to each item's `used`; the places in use and the
// customers number what setup()/attach() found plus what the committed
// transactions reserved, cancelled, added and deleted.
#ifndef SOFTWRAP_WORKLOADS_VACATION_H_
#define SOFTWRAP_WORKLOADS_VACATION_H_

#include <array>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "wl_btree.h"
#include "workload.h"

namespace softwrap::workloads {

// Items, customers, tree nodes, and reservations for ~200k transactions.
inline uint64_t vacation_heap_bytes(const Params& p) { return p.scale * 4 * (64 + 80) + (8ull << 20); }

inline const Info kVacationInfo{"vacation", "vacation", "WCL, Table 3 (STAMP vacation)",
                                "a travel reservation client action (98 % make a reservation) on B+tree tables",
                                nullptr, 1, "items per table and initial customers (STAMP's -r)", 16384, 64,
                                vacation_heap_bytes};

template <class A>
class Vacation {
 public:
  static const Info& info() { return kVacationInfo; }
  Vacation(std::vector<A>* access, const Params& p)
      : acc_(*access), p_(resolve(info(), p)), rng_(thread_rngs(p_)), locks_(kTables), used_(p_.threads),
        customers_(p_.threads), scratch_(p_.threads) {}
  const Params& params() const { return p_; }

  void setup();
  void attach();
  void run(uint32_t tid, uint64_t transactions);
  std::string verify();

  void damage() {
    A& a = acc_[0];
    uint64_t off = 0;
    if (!table(kCar).find(a, 1, &off)) throw WorkloadError("vacation: car 1 is missing");
    Wrap<A> w(a);
    Item* it = a.template ptr<Item>(off);
    a.store(&it->used, a.load(&it->used) + 1);  // used + free != total
    w.commit();
  }

 private:
  static constexpr uint64_t kMagic = 0x564143415449304Eull;  // "VACATI0N"
  static constexpr uint32_t kCar = 0, kFlight = 1, kRoom = 2, kCustomer = 3, kTables = 4;
  static constexpr uint64_t kQueries = 2, kQueryPercent = 90, kUserPercent = 98, kPlaces = 100;
  static constexpr const char* kTableName[kTables] = {"cars", "flights", "rooms", "customers"};

  struct Item {
    uint64_t id, total, used, free, price;
  };
  struct Customer {
    uint64_t id, list;
  };
  struct Reservation {
    uint64_t type, item, price, next;
  };
  struct Root {
    uint64_t magic, relations;
    uint64_t tree[kTables];  // root node offsets
  };

  WlBTree<A> table(uint32_t t) { return WlBTree<A>(&root_->tree[t]); }
  static uint64_t price(Rng& r) { return 50 + 10 * r.below(5); }
  uint64_t query_id(Rng& r) const { return r.between(1, std::max<uint64_t>(1, relations_ * kQueryPercent / 100)); }
  Item* item(A& a, uint32_t type, uint64_t id) {
    uint64_t off = 0;
    return table(type).find(a, id, &off) ? a.template ptr<Item>(off) : nullptr;
  }

  // The actions; each returns (places reserved, customers added), both
  // signed.
  std::pair<int64_t, int64_t> make_reservation(A& a, const std::vector<std::pair<uint32_t, uint64_t>>& q, uint64_t cid);
  std::pair<int64_t, int64_t> delete_customer(A& a, uint64_t cid);
  std::pair<int64_t, int64_t> update_tables(A& a, const std::vector<std::pair<uint32_t, uint64_t>>& q, Rng& r);
  void adopt();

  std::vector<A>& acc_;
  Params p_;
  std::vector<Rng> rng_;
  LockTable locks_;                // one stripe per table
  ThreadCounts used_, customers_;  // net places reserved, customers added, since
                                   // setup()/attach()
  std::vector<std::vector<size_t>> scratch_;
  Root* root_ = nullptr;
  uint64_t relations_ = 0, base_used_ = 0, base_customers_ = 0;
};

template <class A>
void Vacation<A>::setup() {
  A& a = acc_[0];
  relations_ = p_.scale;
  {
    Wrap<A> w(a);
    root_ = static_cast<Root*>(a.root(sizeof(Root)));
    const Root r{0, relations_, {0, 0, 0, 0}};
    a.write(root_, &r, sizeof r);
    w.commit();
  }
  Rng g(p_.seed);
  for (uint32_t t = 0; t < kTables; ++t) {
    WlBTree<A> tree = table(t);
    in_wraps(a, relations_, 32, [&](uint64_t i) {
      const uint64_t id = i + 1;
      uint64_t off;
      if (t == kCustomer) {
        auto* c = static_cast<Customer*>(a.alloc(sizeof(Customer)));
        const Customer init{id, 0};
        a.write(c, &init, sizeof init);
        off = a.off(c);
      } else {
        auto* it = static_cast<Item*>(a.alloc(sizeof(Item)));
        const uint64_t places = kPlaces * g.between(1, 5);
        const Item init{id, places, 0, places, price(g)};
        a.write(it, &init, sizeof init);
        off = a.off(it);
      }
      tree.insert(a, id, off);
    });
  }
  Wrap<A> w(a);
  a.store(&root_->magic, kMagic);  // last: a half-built pool is not adopted
  w.commit();
  adopt();
}

template <class A>
void Vacation<A>::attach() {
  A& a = acc_[0];
  root_ = find_root<A, Root>(a, kMagic, "vacation");
  relations_ = a.load(&root_->relations);
  if (relations_ == 0) throw WorkloadError("vacation: the root names empty tables");
  adopt();
}

template <class A>
void Vacation<A>::adopt() {
  A& a = acc_[0];
  base_used_ = base_customers_ = 0;
  for (uint32_t t = 0; t < kCustomer; ++t) {
    table(t).for_each(a, [&](uint64_t, uint64_t off) { base_used_ += a.load(&a.template ptr<Item>(off)->used); });
  }
  table(kCustomer).for_each(a, [&](uint64_t, uint64_t) { ++base_customers_; });
  used_.clear();
  customers_.clear();
}

template <class A>
void Vacation<A>::run(uint32_t tid, uint64_t transactions) {
  A& a = acc_[tid];
  Rng& r = rng_[tid];
  std::vector<std::pair<uint32_t, uint64_t>> q;
  std::vector<uint64_t> tables;
  for (uint64_t t = 0; t < transactions; ++t) {
    const uint64_t action = r.below(100);
    q.clear();
    tables.clear();
    uint64_t cid = 0;
    if (action < kUserPercent || action % 2 == 1) {  // make-reservation or update-tables
      for (uint64_t n = r.between(1, kQueries); n > 0; --n) {
        q.emplace_back(static_cast<uint32_t>(r.below(3)), query_id(r));
        tables.push_back(q.back().first);
      }
    }
    if (action < kUserPercent || action % 2 == 0) {  // make-reservation or delete-customer
      cid = query_id(r);
      tables.push_back(kCustomer);
    }
    if (action >= kUserPercent && action % 2 == 0) tables.insert(tables.end(), {kCar, kFlight, kRoom});
    LockTable::Guard g(locks_, tables, scratch_[tid]);
    Wrap<A> w(a);
    std::pair<int64_t, int64_t> d;
    if (action < kUserPercent) {
      d = make_reservation(a, q, cid);
    } else if (action % 2 == 0) {
      d = delete_customer(a, cid);
    } else {
      d = update_tables(a, q, r);
    }
    w.commit();
    used_.add(tid, d.first);
    customers_.add(tid, d.second);
  }
}

template <class A>
std::pair<int64_t, int64_t> Vacation<A>::make_reservation(A& a, const std::vector<std::pair<uint32_t, uint64_t>>& q,
                                                          uint64_t cid) {
  std::array<Item*, 3> best{};
  std::array<uint64_t, 3> best_price{};
  for (const auto& [type, id] : q) {
    Item* it = item(a, type, id);
    if (it == nullptr || a.load(&it->free) == 0) continue;
    const uint64_t pr = a.load(&it->price);
    if (best[type] == nullptr || pr < best_price[type]) best[type] = it, best_price[type] = pr;
  }
  if (best[0] == nullptr && best[1] == nullptr && best[2] == nullptr) return {0, 0};
  int64_t added = 0;
  uint64_t coff = 0;
  if (!table(kCustomer).find(a, cid, &coff)) {
    auto* c = static_cast<Customer*>(a.alloc(sizeof(Customer)));
    a.store(&c->id, cid);
    a.store(&c->list, uint64_t{0});
    coff = a.off(c);
    table(kCustomer).insert(a, cid, coff);
    added = 1;
  }
  auto* cu = a.template ptr<Customer>(coff);
  int64_t reserved = 0;
  for (uint32_t type = 0; type < 3; ++type) {
    Item* it = best[type];
    if (it == nullptr) continue;
    a.store(&it->used, a.load(&it->used) + 1);
    a.store(&it->free, a.load(&it->free) - 1);
    a.store(&it->price, best_price[type]);
    auto* res = static_cast<Reservation*>(a.alloc(sizeof(Reservation)));
    a.store(&res->type, uint64_t{type});
    a.store(&res->item, a.load(&it->id));
    a.store(&res->price, best_price[type]);
    a.store(&res->next, a.load(&cu->list));
    a.store(&cu->list, a.off(res));
    ++reserved;
  }
  return {reserved, added};
}

template <class A>
std::pair<int64_t, int64_t> Vacation<A>::delete_customer(A& a, uint64_t cid) {
  uint64_t coff = 0;
  if (!table(kCustomer).find(a, cid, &coff)) return {0, 0};
  auto* cu = a.template ptr<Customer>(coff);
  int64_t cancelled = 0;
  uint64_t bill = 0;
  for (uint64_t o = a.load(&cu->list); o != 0;) {
    auto* res = a.template ptr<Reservation>(o);
    const uint32_t type = static_cast<uint32_t>(a.load(&res->type));
    Item* it = type < 3 ? item(a, type, a.load(&res->item)) : nullptr;
    if (it == nullptr) throw WorkloadError("vacation: a reservation names a missing item");
    a.store(&it->used, a.load(&it->used) - 1);
    a.store(&it->free, a.load(&it->free) + 1);
    bill += a.load(&res->price);
    ++cancelled;
    o = a.load(&res->next);
    a.free(res);
  }
  (void)bill;  // the customer's bill goes to the client
  table(kCustomer).erase(a, cid, &coff);
  a.free(cu);
  return {-cancelled, -1};
}

template <class A>
std::pair<int64_t, int64_t> Vacation<A>::update_tables(A& a, const std::vector<std::pair<uint32_t, uint64_t>>& q,
                                                       Rng& r) {
  for (const auto& [type, id] : q) {
    const bool add = r.percent(50);
    const uint64_t pr = price(r);
    Item* it = item(a, type, id);
    if (add) {
      if (it != nullptr) {
        a.store(&it->total, a.load(&it->total) + kPlaces);
        a.store(&it->free, a.load(&it->free) + kPlaces);
        a.store(&it->price, pr);
      } else {
        it = static_cast<Item*>(a.alloc(sizeof(Item)));
        a.store(&it->id, id);
        a.store(&it->total, kPlaces);
        a.store(&it->used, uint64_t{0});
        a.store(&it->free, kPlaces);
        a.store(&it->price, pr);
        table(type).insert(a, id, a.off(it));
      }
    } else if (it != nullptr && a.load(&it->free) >= kPlaces) {
      const uint64_t total = a.load(&it->total) - kPlaces;
      if (total == 0) {  // no places left, none in use: the item goes
        uint64_t off;
        table(type).erase(a, id, &off);
        a.free(it);
      } else {
        a.store(&it->total, total);
        a.store(&it->free, a.load(&it->free) - kPlaces);
      }
    }
  }
  return {0, 0};
}

template <class A>
std::string Vacation<A>::verify() {
  A& a = acc_[0];
  // (type, id) -> places in use, counted from the customers' lists.
  std::map<std::pair<uint32_t, uint64_t>, uint64_t> held;
  uint64_t customers = 0, entries = 0;
  for (uint32_t t = 0; t < kTables; ++t) {
    std::string why = table(t).check(a, std::string("vacation: ") + kTableName[t], &entries);
    if (!why.empty()) return why;
  }
  std::string why;
  table(kCustomer).for_each(a, [&](uint64_t key, uint64_t off) {
    ++customers;
    auto* cu = a.template ptr<Customer>(off);
    if (why.empty() && a.load(&cu->id) != key) why = mismatch("vacation: customer id under key", a.load(&cu->id), key);
    uint64_t n = 0;
    for (uint64_t o = a.load(&cu->list); o != 0 && why.empty(); o = a.load(&a.template ptr<Reservation>(o)->next)) {
      auto* res = a.template ptr<Reservation>(o);
      const uint64_t type = a.load(&res->type);
      if (type >= 3 || ++n > kWalkLimit) {
        why = "vacation: customer " + std::to_string(key) + " has a broken reservation list";
        break;
      }
      ++held[{static_cast<uint32_t>(type), a.load(&res->item)}];
    }
  });
  if (!why.empty()) return why;
  uint64_t used = 0;
  for (uint32_t t = 0; t < kCustomer && why.empty(); ++t) {
    table(t).for_each(a, [&](uint64_t key, uint64_t off) {
      if (!why.empty()) return;
      auto* it = a.template ptr<Item>(off);
      const std::string name = std::string("vacation: ") + kTableName[t] + " item " + std::to_string(key);
      const uint64_t u = a.load(&it->used);
      if (a.load(&it->id) != key) {
        why = mismatch(name + ": id", a.load(&it->id), key);
      } else if (u + a.load(&it->free) != a.load(&it->total)) {
        why = mismatch(name + ": used + free", u + a.load(&it->free), a.load(&it->total));
      } else {
        auto h = held.find({t, key});
        const uint64_t n = h == held.end() ? 0 : h->second;
        if (n != u) why = mismatch(name + ": reservations held", n, u);
        if (h != held.end()) held.erase(h);
      }
      used += u;
    });
  }
  if (!why.empty()) return why;
  if (!held.empty()) {
    return "vacation: a reservation names " + std::string(kTableName[held.begin()->first.first]) + " item " +
           std::to_string(held.begin()->first.second) + ", which is not in the table";
  }
  const uint64_t want_used = base_used_ + static_cast<uint64_t>(used_.sum());
  if (used != want_used) return mismatch("vacation: places in use", used, want_used);
  const uint64_t want_customers = base_customers_ + static_cast<uint64_t>(customers_.sum());
  if (customers != want_customers) return mismatch("vacation: customers", customers, want_customers);
  return "";
}

}  // namespace softwrap::workloads

#endif  // SOFTWRAP_WORKLOADS_VACATION_H_
